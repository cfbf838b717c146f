import { expect } from 'vitest';
import { claimById } from '../src/campaign/claims.js';
import { runCampaign, type Counterexample } from '../src/campaign/run.js';
import { runScenario } from '../src/scenario/run.js';
import { ReplayChoice } from '../src/sim/choice/replay.js';
import { searchBounded } from '../src/sim/explore/bounded.js';

/** Seed of the CI property runs; `retrysim check --seed S` explores others. */
export const PROPERTY_SEED = 20261130;

/**
 * Runs a claim that must fail and checks what a canary must show: the
 * property goes red on the invariant the claim names (default "exactly one"), the shrunk counterexample has the
 * claim's minimal shape, and the saved scenario replays to the same
 * violation from its recorded schedule.
 */
export async function expectFailsMinimally(claimId: string, runs = 2000): Promise<Counterexample> {
  const claim = claimById(claimId);
  const r = await runCampaign({ claim, runs, seed: PROPERTY_SEED });
  expect(r.error).toBeUndefined();
  expect(r.verdict).toBe('fails');
  const cx = r.counterexample!;
  expect(cx.violations.map((v) => v.invariant)).toContain(claim.violation ?? 'exactly-one');
  expect(cx.notMinimal).toEqual([]);
  const again = await runScenario(cx.scenario, { choices: new ReplayChoice(cx.scenario.schedule) });
  expect(again.violations).toEqual(cx.violations);
  await expectFewestPreemptions(cx, claim.violation ?? 'exactly-one');
  return cx;
}

/**
 * Asserts, by running them all, that no schedule of the counterexample's
 * scenario with fewer preemptions than its own breaks `invariant`.
 */
export async function expectFewestPreemptions(cx: Counterexample, invariant: string): Promise<void> {
  expect(cx.minimised?.preemptionsMinimal).toBe(true);
  if (cx.size.preemptions === 0) return;
  const below = await searchBounded(
    (choices) => runScenario(cx.scenario, { choices }),
    (r) => r.violations.some((v) => v.invariant === invariant),
    { preemptionsMax: cx.size.preemptions - 1, runsMax: 20_000 },
  );
  expect(below.complete).toBe(true);
  expect(below.best).toBeUndefined();
}
