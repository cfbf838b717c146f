/**
 * A check-then-act race planted in key_atomic (key_atomic_racy_claim: the key
 * is read in one step and the claim written in a later one) is caught by all
 * three ways `retrysim check` explores schedules, with the defaults a user
 * gets: generated schedules, PCT, and exhaustive enumeration.
 */
import { describe, expect, it } from 'vitest';
import { runJob } from '../src/campaign/job.js';

const claimId = 'key_atomic_racy_claim-tool_call-fails';

describe('the planted check-then-act race in key_atomic', () => {
  it.each(['random', 'pct', 'exhaustive'] as const)('is caught by --explore %s (default settings) on exactly-one, minimally', async (explore) => {
    const r = await runJob({ claimId, runs: explore === 'exhaustive' ? 20_000 : 100_000, seed: 1, explore }, () => 0);
    expect(r.error).toBeUndefined();
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(r.counterexample!.notMinimal).toEqual([]);
  });

  it('and the same campaigns hold for key_atomic itself (the race is the variant\'s, not the harness\'s)', async () => {
    const r = await runJob({ claimId: 'key_atomic-tool_call-holds', runs: 20_000, seed: 1, explore: 'exhaustive' }, () => 0);
    expect(r.verdict).toBe('holds');
    expect(r.complete).toBe(true);
  });
});
