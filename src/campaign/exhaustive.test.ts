import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { claimById, type Claim } from './claims.js';
import { DEFAULT_SCHEDULES_MAX, runBounded, runExhaustive, withBounded } from './exhaustive.js';
import { claimSituations, type BoundedPart, type CampaignResult } from './run.js';
import { judge } from './judge.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const HOLDS = claimById('key_atomic-tool_call-holds');
/** key_atomic under a few faults only: small scenarios of one schedule each (cheap). */
const FEW: Claim = { ...HOLDS, id: 'key_atomic-few-faults', faults: ['loseResponse', 'crash'] };
/** Two workers on one key: 4 schedules with sleep sets, 1,296 without. */
const TWO: Claim = { ...HOLDS, id: 'key_atomic-two-workers', faults: ['concurrency'] };
const SPLIT_CRASH = claimById('key_split-tool_call-crash-fails');
const REFUSE = claimById('key_atomic_refuse_keyed-tool_call-fails');
const REFUSE_AS_HOLDS: Claim = { ...REFUSE, id: 'refuse-keyed-expected-to-hold', expected: 'holds', violation: undefined, minimal: undefined };

function ticking(start: number): () => number {
  let t = start - 1;
  return () => ++t;
}

describe('runExhaustive: every schedule of every small scenario', () => {
  it('holds when every schedule ran without a violation, with what it covered', async () => {
    const progress: number[] = [];
    const r = await runExhaustive({ claim: FEW, seed: 5, onProgress: (n) => progress.push(n) });
    expect(r).toMatchObject({ claim: FEW, seed: 5, verdict: 'holds', runs: 3, asked: DEFAULT_SCHEDULES_MAX, shrinks: 0, complete: true, reduction: { blocked: 0 } });
    expect(DEFAULT_SCHEDULES_MAX).toBe(20_000);
    expect('shortfall' in r).toBe(false);
    // Schedules numbered across the scenarios.
    expect(progress).toEqual([1, 2, 3]);
    expect(r.coverage!.runs).toBe(3);
    expect(r.coverage!.rows.map((x) => x.id)).toEqual(claimSituations(FEW).map((x) => x.id));
    const at = (id: string) => r.coverage!.rows.find((x) => x.id === id)!.runs;
    expect(at('crash@after-process')).toBe(1);
    expect(at('lose-after-commit')).toBe(1);
    expect(at('replay')).toBe(1);
    expect(at('overlap:2')).toBe(0);
    // Each is over within a second of virtual time (to its last event: a request timeout left pending after its answer does not stretch it).
    expect(at('span:1s')).toBe(3);
    expect(at('span:1min')).toBe(0);
  });

  it('sleep sets run one schedule per class; without them, every interleaving', async () => {
    const progress: number[] = [];
    const reduced = await runExhaustive({ claim: TWO, seed: 1, onProgress: (n) => progress.push(n) });
    expect(progress).toEqual([1, 2, 3, 4]);
    expect(reduced).toMatchObject({ verdict: 'holds', runs: 4, complete: true, reduction: { blocked: 20 } });
    expect(reduced.coverage!.rows.find((x) => x.id === 'overlap:2')!.runs).toBeGreaterThan(0);
    const plain = await runExhaustive({ claim: TWO, seed: 1, reduce: false, schedulesMax: 30 });
    expect(plain).toMatchObject({ verdict: 'inconclusive', runs: 30, complete: false });
    expect('reduction' in plain).toBe(false);
  });

  it('a schedule limit that stops a scenario makes it inconclusive, saying so', async () => {
    const r = await runExhaustive({ claim: TWO, seed: 1, schedulesMax: 2 });
    expect(r).toMatchObject({ verdict: 'inconclusive', runs: 2, asked: 2, complete: false });
    expect(r.shortfall).toEqual({ done: 2, asked: 2, unit: 'schedules', stoppedBy: 'the schedule limit of 2 per small scenario (--runs)' });
    expect(judge(r)).toMatchObject({ ok: false, inconclusive: true });
  });

  it('with unreduced, the same search without sleep sets is counted beside it', async () => {
    const r = await runExhaustive({ claim: TWO, seed: 1, unreduced: true, schedulesMax: 50 });
    expect(r).toMatchObject({ verdict: 'holds', runs: 4, complete: true, reduction: { blocked: 20, unreduced: 50, unreducedComplete: false } });
    const small = await runExhaustive({ claim: FEW, seed: 1, unreduced: true });
    expect(small.reduction).toEqual({ blocked: 0, unreduced: 3, unreducedComplete: true });
    // Only with reduction on is there anything to compare.
    expect('reduction' in await runExhaustive({ claim: FEW, seed: 1, unreduced: true, reduce: false })).toBe(false);
  });

  it('fails at the first violating schedule: minimised, saved, timed', async () => {
    const dir = tmp('rs-exh-');
    const r = await runExhaustive({ claim: SPLIT_CRASH, seed: 77, foundDir: dir, clockMs: ticking(500) });
    expect(r).toMatchObject({ verdict: 'fails', runs: 2, asked: DEFAULT_SCHEDULES_MAX, shrinks: 0, complete: true, firstFailureMs: 1, reduction: { blocked: 0 } });
    expect(r.coverage).toBeUndefined();
    const cx = r.counterexample!;
    expect(cx.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(cx.scenario.seed).toBe(77);
    expect(cx.notMinimal).toEqual([]);
    expect(existsSync(cx.file!)).toBe(true);
    expect(judge(r)).toEqual({ ok: true, why: [], inconclusive: false });
    // Without reduction no reduction field; with unreduced, the failing plain search is counted too.
    expect('reduction' in await runExhaustive({ claim: SPLIT_CRASH, seed: 77, reduce: false })).toBe(false);
    expect((await runExhaustive({ claim: SPLIT_CRASH, seed: 77, unreduced: true })).reduction).toEqual({ blocked: 0, unreduced: 2, unreducedComplete: true });
    // Without a clock the time is 0, not NaN.
    expect((await runExhaustive({ claim: SPLIT_CRASH, seed: 77 })).firstFailureMs).toBe(0);
  });

  it('the failing schedule is the one minimised (at seed 4 the scenario\'s own seeded schedule does not race)', async () => {
    const r = await runExhaustive({ claim: claimById('key_split-tool_call-race-fails'), seed: 4 });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
    expect(r.counterexample!.size).toMatchObject({ workers: 2, preemptions: 1 });
  });

  it('a service refusing every keyed write, claimed to hold, fails on progress (exhaustive)', async () => {
    const r = await runExhaustive({ claim: REFUSE_AS_HOLDS, seed: 1 });
    expect(r.verdict).toBe('fails');
    expect(r.runs).toBe(1);
    expect(r.counterexample!.violations.map((v) => v.invariant)).toEqual(['progress']);
    expect(judge(r).why).toEqual(['expected it to hold, but it failed']);
  });
});

describe('runBounded: the bounded-exhaustive part of a holding row', () => {
  it('says how many small scenarios of what size, how many schedules, and whether that was all', async () => {
    const b = await runBounded({ claim: FEW, seed: 1 });
    expect(b.part).toEqual({ scenarios: 3, operationsMax: 1, workersMax: 1, faultsMax: 1, schedules: 3, complete: true, schedulesMax: 20_000, blocked: 0 });
    expect(b.result.verdict).toBe('holds');
    const cut = await runBounded({ claim: TWO, seed: 1, schedulesMax: 2 });
    expect(cut.part).toEqual({ scenarios: 1, operationsMax: 1, workersMax: 2, faultsMax: 0, schedules: 2, complete: false, schedulesMax: 2, blocked: cut.result.reduction!.blocked });
    expect(cut.part.blocked).toBeGreaterThan(0);
    // The largest scenario in each dimension: one key sent again by a second operation (2 operations, 2 workers) beside no fault (1, 1).
    const reuse = await runBounded({ claim: { ...HOLDS, id: 'key_atomic-key-reuse', faults: ['keyReuse'] }, seed: 1 });
    expect(reuse.part).toMatchObject({ scenarios: 2, operationsMax: 2, workersMax: 2, faultsMax: 0, complete: true });
  });
});

describe('withBounded: one row from the bounded part and the random campaign', () => {
  const part: BoundedPart = { scenarios: 2, operationsMax: 1, workersMax: 2, faultsMax: 1, schedules: 9, complete: true, schedulesMax: 20, blocked: 1 };
  const cov = (runs: number, n: number) => ({ runs, rows: [{ id: 'replay', what: 'a stored answer replayed', runs: n }] });
  const base = { claim: HOLDS, seed: 1, shrinks: 0 };
  const bHolds: CampaignResult = { ...base, runs: 9, verdict: 'holds', complete: true, coverage: cov(9, 2) };
  const rHolds: CampaignResult = { ...base, runs: 100, verdict: 'holds', asked: 100, coverage: cov(100, 40) };

  it('both held: holds, the random row with the bounded part and the summed coverage', () => {
    const r = withBounded({ result: bHolds, part }, rHolds);
    expect(r).toEqual({ ...rHolds, verdict: 'holds', bounded: part, coverage: cov(109, 42) });
  });

  it('a failure in either decides; no random campaign after a bounded failure', () => {
    const bFails: CampaignResult = { ...base, runs: 3, verdict: 'fails', complete: false, firstFailureMs: 4 };
    expect(withBounded({ result: bFails, part }, rHolds)).toEqual({ ...bFails, bounded: part });
    expect(withBounded({ result: bFails, part }, undefined)).toEqual({ ...bFails, bounded: part });
    expect(withBounded({ result: bHolds, part }, undefined)).toEqual({ ...bHolds, bounded: part });
    const rFails: CampaignResult = { ...base, runs: 12, verdict: 'fails', firstFailureRun: 12 };
    expect(withBounded({ result: bHolds, part }, rFails)).toEqual({ ...rFails, bounded: part });
  });

  it('either short: inconclusive, with the random campaign\'s shortfall first, else the bounded one', () => {
    const rShort: CampaignResult = { ...rHolds, runs: 50, verdict: 'inconclusive', shortfall: { done: 50, asked: 100, unit: 'runs', stoppedBy: 'time budget 1 ms' } };
    const bShort: CampaignResult = { ...bHolds, verdict: 'inconclusive', complete: false, shortfall: { done: 9, asked: 20, unit: 'schedules', stoppedBy: 'the schedule limit' } };
    expect(withBounded({ result: bHolds, part }, rShort)).toMatchObject({ verdict: 'inconclusive', shortfall: rShort.shortfall });
    expect(withBounded({ result: bShort, part }, rHolds)).toMatchObject({ verdict: 'inconclusive', shortfall: bShort.shortfall });
    expect(withBounded({ result: bShort, part }, rShort)).toMatchObject({ verdict: 'inconclusive', shortfall: rShort.shortfall });
    // No coverage on either side: none on the row.
    const { coverage: _b, ...bNo } = bHolds;
    const { coverage: _r, ...rNo } = rHolds;
    expect('coverage' in withBounded({ result: bNo, part }, rNo)).toBe(false);
    expect('shortfall' in withBounded({ result: bNo, part }, rNo)).toBe(false);
    expect(withBounded({ result: bNo, part }, rHolds).coverage).toEqual(rHolds.coverage);
  });
});
