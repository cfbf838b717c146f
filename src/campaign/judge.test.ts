import { describe, expect, it } from 'vitest';
import { claimById } from './claims.js';
import { judge } from './judge.js';
import type { CampaignResult, Counterexample } from './run.js';

const HOLDS = claimById('key_atomic-tool_call-holds');
/** A canary that names no invariant: exactly-one by default. */
const NAIVE = claimById('naive-none-fails');
/** A canary that names progress. */
const REFUSE = claimById('key_atomic_refuse_keyed-tool_call-fails');

function cx(invariants: string[], notMinimal: string[] = []): Counterexample {
  return {
    violations: invariants.map((invariant) => ({ invariant, op: 'op1', detail: 'd' })),
    notMinimal,
  } as unknown as Counterexample;
}

function result(o: Partial<CampaignResult> & Pick<CampaignResult, 'claim' | 'verdict'>): CampaignResult {
  return { seed: 1, runs: 10, shrinks: 0, ...o };
}

describe('judge: one verdict per claim row', () => {
  it('as expected: a holding claim that held, a canary that broke the invariant it names', () => {
    expect(judge(result({ claim: HOLDS, verdict: 'holds' }))).toEqual({ ok: true, why: [], inconclusive: false });
    expect(judge(result({ claim: NAIVE, verdict: 'fails', counterexample: cx(['exactly-one']) }))).toEqual({ ok: true, why: [], inconclusive: false });
    expect(judge(result({ claim: REFUSE, verdict: 'fails', counterexample: cx(['progress']) }))).toEqual({ ok: true, why: [], inconclusive: false });
  });

  it('the other verdict than expected, in words', () => {
    expect(judge(result({ claim: HOLDS, verdict: 'fails', counterexample: cx(['progress']) }))).toEqual({ ok: false, why: ['expected it to hold, but it failed'], inconclusive: false });
    expect(judge(result({ claim: NAIVE, verdict: 'holds' }))).toEqual({ ok: false, why: ['expected it to fail, but it held'], inconclusive: false });
  });

  it('a canary whose counterexample breaks another invariant than the one it names is not as expected', () => {
    expect(judge(result({ claim: REFUSE, verdict: 'fails', counterexample: cx(['exactly-one', 'id-exists', 'exactly-one']) }))).toEqual({
      ok: false, why: ['it must break progress, but the counterexample breaks exactly-one, id-exists'], inconclusive: false,
    });
    // Unnamed: exactly-one.
    expect(judge(result({ claim: NAIVE, verdict: 'fails', counterexample: cx(['progress']) })).why).toEqual(['it must break exactly-one, but the counterexample breaks progress']);
    expect(judge(result({ claim: NAIVE, verdict: 'fails', counterexample: cx([]) })).why).toEqual(['it must break exactly-one, but the counterexample breaks nothing']);
    // One of several is enough.
    expect(judge(result({ claim: NAIVE, verdict: 'fails', counterexample: cx(['progress', 'exactly-one']) })).ok).toBe(true);
  });

  it('a counterexample not minimal in the pinned dimensions is a reason per problem', () => {
    const j = judge(result({ claim: NAIVE, verdict: 'fails', counterexample: cx(['exactly-one'], ['operations 2, expected 1', 'faults 3, expected at most 1']) }));
    expect(j).toEqual({ ok: false, why: ['counterexample not minimal: operations 2, expected 1', 'counterexample not minimal: faults 3, expected at most 1'], inconclusive: false });
  });

  it('an exception escaping a run is never as expected, even for a canary', () => {
    expect(judge(result({ claim: NAIVE, verdict: 'fails', error: 'boom' }))).toEqual({ ok: false, why: ['an exception escaped a run: boom'], inconclusive: false });
  });

  it('inconclusive: the shortfall is the one reason, exit 4 unless an exception escaped too', () => {
    const shortfall = { done: 3, asked: 10, unit: 'runs' as const, stoppedBy: 'time budget 1 ms' };
    // Nothing else is judged: no "expected it to hold" line, no minimality line.
    expect(judge(result({ claim: HOLDS, verdict: 'inconclusive', shortfall, counterexample: cx([], ['x']) }))).toEqual({
      ok: false, why: ['inconclusive: 3 of 10 runs (stopped by time budget 1 ms); no failure found, but the search did not finish'], inconclusive: true,
    });
    expect(judge(result({ claim: NAIVE, verdict: 'inconclusive', runs: 5 }))).toEqual({ ok: false, why: ['inconclusive: 5 runs'], inconclusive: true });
    expect(judge(result({ claim: HOLDS, verdict: 'inconclusive', runs: 5, error: 'boom' }))).toEqual({ ok: false, why: ['an exception escaped a run: boom', 'inconclusive: 5 runs'], inconclusive: false });
  });
});
