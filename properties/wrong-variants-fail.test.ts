/**
 * The canaries: the same generated faults make every known-wrong variant
 * fail, and fast-check shrinks each failure to its minimal shape (asserted,
 * not just the failure). Without these, "holds" would mean nothing: they are
 * the proof that the faults fire.
 */
import { describe, expect, it } from 'vitest';
import { CLAIMS } from '../src/campaign/claims.js';
import { runCampaign } from '../src/campaign/run.js';
import { runScenario } from '../src/scenario/run.js';
import { ReplayChoice } from '../src/sim/choice/replay.js';

const failing = CLAIMS.filter((c) => c.expected === 'fails');

describe('known-wrong variants fail with a minimal counterexample', () => {
  it.each(failing.map((c) => [c.id, c] as const))('%s', async (_id, claim) => {
    const r = await runCampaign({ claim, runs: 2000, seed: 20261130 });
    expect(r.verdict).toBe('fails');
    expect(r.error).toBeUndefined();
    const cx = r.counterexample!;
    expect(cx.violations.map((v) => v.invariant)).toContain('exactly-one');
    // The minimal shape the claim promises (e.g. naive: one operation, one
    // lost response, two attempts).
    expect(cx.notMinimal).toEqual([]);
    expect(cx.size.operations).toBe(claim.minimal!.operations);
    if (claim.minimal!.attempts !== undefined) expect(cx.size.attempts).toBe(claim.minimal!.attempts);
    // The saved scenario replays to the same violation from its recorded schedule.
    const again = await runScenario(cx.scenario, { choices: new ReplayChoice(cx.scenario.schedule) });
    expect(again.violations.map((v) => v.invariant)).toEqual(cx.violations.map((v) => v.invariant));
  });

  it('naive shrinks to exactly one operation, one lost response and two attempts', async () => {
    const claim = CLAIMS.find((c) => c.id === 'naive-none-fails')!;
    const cx = (await runCampaign({ claim, runs: 2000, seed: 7 })).counterexample!;
    const s = cx.scenario;
    expect(s.operations).toHaveLength(1);
    expect(s.operations[0]!.workers).toBe(1);
    expect(s.faults.loseResponseAfterCommit + s.network.loseResponses).toBe(1);
    expect(cx.size.attempts).toBe(2);
  });
});
