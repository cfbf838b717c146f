import { describe, expect, it } from 'vitest';
import { runClientCampaign } from './campaign.js';
import type { RetryClient } from './run.js';
import { buggyClient } from '../../examples/fetch-retry-client/client.js';

/**
 * The shrink budget of a client campaign covers fast-check's own shrinking
 * too, not only the minimiser after it: once it has run out, no shrink
 * candidate runs. Counted in calls of the client's `run` (one per worker of
 * each run), on a clock that jumps an hour per read, so nothing depends on
 * the machine's speed.
 */
describe('a client campaign\'s shrink budget', () => {
  it('expired when the failure is found: the case runs only to be checked, minimised (one run) and recorded (two runs) — no shrink candidate runs', async () => {
    let calls = 0;
    const marks: number[] = [];
    const counting: RetryClient = { ...buggyClient, run: (fetch, op) => (calls++, buggyClient.run(fetch, op)) };
    let now = 0;
    const r = await runClientCampaign({
      client: counting, runs: 300, seed: 1, clockMs: () => (now += 3_600_000), shrinkBudgetMs: 60_000,
      // After each generated run, the failing one included: its calls are the last two marks' difference.
      onProgress: () => marks.push(calls),
    });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.minimised).toMatchObject({ runs: 1, stopped: { by: 'shrink budget 60 s' } });
    const atFailure = marks.at(-1)!;
    const perRun = atFailure - (marks.at(-2) ?? 0);
    expect(perRun).toBeGreaterThan(0);
    // The failing case again (recordClientCounterexample's check), the minimiser's one run, the recorded run and its strict replay.
    expect(calls).toBe(atFailure + 4 * perRun);
  });
});
