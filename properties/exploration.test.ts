/**
 * Beyond uniform random: every schedule of small two-worker scenarios (at
 * most one fault each) keeps key_atomic's invariants — the whole enumeration,
 * not a sample — while the wrong variants fail inside the same enumeration;
 * and the PCT source finds the wrong variants' failures too.
 */
import { describe, expect, it } from 'vitest';
import { claimById, CLAIMS } from '../src/campaign/claims.js';
import { runExhaustive } from '../src/campaign/exhaustive.js';
import { runCampaign } from '../src/campaign/run.js';
import { campaignPct } from '../src/campaign/pct.js';

describe('bounded exhaustive exploration', () => {
  it('key_atomic with fencing survives every schedule of every small scenario', async () => {
    const r = await runExhaustive({ claim: claimById('key_atomic-tool_call-holds'), seed: 1, schedulesMax: 20_000 });
    expect(r.verdict).toBe('holds');
    expect(r.complete).toBe(true);
    // One schedule per class of schedules equal up to commuting steps: 199
    // at the time of writing, standing for 14,919 interleavings (`retrysim
    // check --explore exhaustive --unreduced` counts both).
    expect(r.runs).toBeGreaterThan(100);
    expect(r.reduction?.blocked).toBeGreaterThan(0);
  });

  it.each(CLAIMS.filter((c) => c.expected === 'fails').map((c) => c.id))(
    '%s fails inside the enumeration, on its named invariant, with a minimal counterexample',
    async (id) => {
      const r = await runExhaustive({ claim: claimById(id), seed: 1, schedulesMax: 20_000 });
      expect(r.verdict).toBe('fails');
      expect(r.counterexample!.violations.map((v) => v.invariant)).toContain(claimById(id).violation ?? 'exactly-one');
      expect(r.counterexample!.notMinimal).toEqual([]);
    },
  );
});

describe('PCT exploration', () => {
  it.each(CLAIMS.map((c) => [c.id, c] as const))('%s gets its expected verdict under PCT schedules', async (_id, claim) => {
    const r = await runCampaign({ claim, runs: 300, seed: 5, explore: 'pct', pct: campaignPct });
    expect(r.verdict).toBe(claim.expected);
  });
});
