import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from './campaign.js';
import type { ServiceDefinition } from './definition.js';
import payments from '../../examples/payments-check-then-insert/service.js';

/**
 * The shrink budget of a service campaign covers fast-check's own shrinking
 * too, not only the minimiser after it: once it has run out, no shrink
 * candidate runs. Counted in calls of the service's `effects.of` (the same
 * for every run of one case), on a clock that jumps an hour per read, so nothing depends on
 * the machine's speed.
 */
describe('a service campaign\'s shrink budget', () => {
  it('expired when the failure is found: the case runs only to be checked, minimised (one run) and written (one run) — no shrink candidate runs', async () => {
    let judged = 0;
    const marks: number[] = [];
    const def = { ...payments, effects: { ...payments.effects, of: (...a: Parameters<typeof payments.effects.of>) => (judged++, payments.effects.of(...a)) } } as ServiceDefinition;
    let now = 0;
    const r = await runServiceCampaign({
      def, module: 'payments-counting', runs: 2000, seed: 1, clockMs: () => (now += 3_600_000), shrinkBudgetMs: 60_000,
      // After each generated run, the failing one included: its calls are the last two marks' difference.
      onProgress: () => marks.push(judged),
    });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.minimised).toMatchObject({ runs: 1, stopped: { by: 'shrink budget 60 s' } });
    expect(r.counterexample!.notMinimal[0]).toBe('shrinking stopped at its time limit (shrink budget 60 s): not known to be minimal');
    const atFailure = marks.at(-1)!;
    const perRun = atFailure - (marks.at(-2) ?? 0);
    expect(perRun).toBeGreaterThan(0);
    // The failing case again (minimiseAndWrite's check), the minimiser's one run, and the run that is written.
    expect(judged).toBe(atFailure + 3 * perRun);
  });
});
