/**
 * A counterexample's schedule is minimal in preemptions for its scenario —
 * asserted on 20 campaign seeds by running every schedule with fewer
 * preemptions, not taken on trust from the minimiser's own flag.
 */
import { describe, expect, it } from 'vitest';
import { claimById } from '../src/campaign/claims.js';
import { runCampaign } from '../src/campaign/run.js';
import { expectFewestPreemptions } from './support.js';

const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

describe.each(['key_split-tool_call-race-fails', 'key_atomic_nofence-tool_call-fails'])('%s on 20 seeds', (id) => {
  const claim = claimById(id);
  it.each(SEEDS)('seed %i: fails on its invariant with a counterexample minimal in preemptions and in every pinned dimension', async (seed) => {
    const r = await runCampaign({ claim, runs: 3000, seed });
    expect(r.verdict).toBe('fails');
    const cx = r.counterexample!;
    expect(cx.notMinimal).toEqual([]);
    if (id.startsWith('key_split')) expect(cx.size).toMatchObject({ operations: 1, workers: 2, faults: 0, attempts: 2, preemptions: 1 });
    await expectFewestPreemptions(cx, claim.violation ?? 'exactly-one');
  });
});
