import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { claimById, type Claim } from './claims.js';
import { judge } from './judge.js';
import {
  arbitraryFor, claimSituations, failsFor, finishFailure, minimalityProblems, resultOf, runCampaign, saveCounterexample, scanRuns,
  shrinkCase, SHRINK_RUNS_MAX, targetInvariant, withModule, type ScanResult,
} from './run.js';
import { caseAt, ownedCount } from './runs.js';
import { situationsOf } from './coverage.js';
import { builtinService } from '../tracker/builtin.js';
import type { ScenarioRun } from '../scenario/run.js';
import { runScenario } from '../scenario/run.js';
import { loadScenario, printScenario } from '../scenario/load.js';
import { hashJson } from '../sim/canonical.js';
import { ListChoice } from '../sim/choice/list.js';
import { ReplayChoice } from '../sim/choice/replay.js';
import type { GeneratedCase } from '../scenario/arbitraries.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { campaignPct } from './pct.js';
import { smallScenarios } from './small.js';
import { minimiseAndSave } from './run.js';

const tmp = tempDirs();

const HOLDS = claimById('key_atomic-tool_call-holds');
const NAIVE = claimById('naive-none-fails');
const REFUSE = claimById('key_atomic_refuse_keyed-tool_call-fails');
/**
 * A service that answers 409 to every keyed write, claimed to *hold*: safe
 * (no duplicate, nothing wrong stored), and no operation ever succeeds —
 * only the progress invariant (SPEC §5, invariant 5) can refute it.
 */
const REFUSE_AS_HOLDS: Claim = { ...REFUSE, id: 'refuse-keyed-expected-to-hold', expected: 'holds', violation: undefined, minimal: undefined };
/** Two requests with one key both pass key_split's lookup: needs its one preemption. */
const RACE = claimById('key_split-tool_call-race-fails');
/** naive claimed to hold: a duplicate needs the lost response. */
const NAIVE_AS_HOLDS: Claim = { ...NAIVE, id: 'naive-expected-to-hold', expected: 'holds', minimal: undefined };

const run = (...invariants: string[]) => ({ violations: invariants.map((invariant) => ({ invariant, op: 'op1', detail: '' })) }) as unknown as ScenarioRun;

/** A clock for the time-budget paths: each reading is 1 ms after the last, from `start`. */
function ticking(start: number): () => number {
  let t = start - 1;
  return () => ++t;
}

describe('failsFor: what counts as a failure of a claim', () => {
  it('a claim expected to hold fails on any violation, progress included', () => {
    const f = failsFor(HOLDS);
    expect(f(run())).toBe(false);
    expect(f(run('progress'))).toBe(true);
    expect(f(run('exactly-one'))).toBe(true);
    expect(f(run('tenant-isolation', 'stable-key'))).toBe(true);
  });

  it('a canary fails only on the invariant it names (default exactly-one)', () => {
    expect(failsFor(NAIVE)(run('exactly-one'))).toBe(true);
    expect(failsFor(NAIVE)(run('progress'))).toBe(false);
    expect(failsFor(NAIVE)(run('progress', 'exactly-one'))).toBe(true);
    expect(failsFor(REFUSE)(run('progress'))).toBe(true);
    expect(failsFor(REFUSE)(run('exactly-one'))).toBe(false);
    expect(failsFor(REFUSE)(run())).toBe(false);
  });

  // The audit's surviving mutant: the holding predicate narrowed to exactly-one violations.
  it('a service refusing every keyed write, claimed to hold, comes out fails on progress (random campaign)', async () => {
    const r = await runCampaign({ claim: REFUSE_AS_HOLDS, runs: 20, seed: 1 });
    expect(r.verdict).toBe('fails');
    expect(r.error).toBeUndefined();
    expect(r.firstFailureRun).toBe(4);
    expect(r.runs).toBe(4);
    expect(r.counterexample!.violations.map((v) => v.invariant)).toEqual(['progress']);
    // Minimised to one request that is refused: nothing else is needed.
    expect(r.counterexample!.size).toMatchObject({ operations: 1, workers: 1, faults: 0 });
    expect(r.counterexample!.notMinimal).toEqual([]);
    expect(judge(r)).toEqual({ ok: false, why: ['expected it to hold, but it failed'], inconclusive: false });
  });
});

describe('minimalityProblems: the shrunk counterexample against the claim\'s minimal shape', () => {
  const size = { operations: 1, workers: 2, faults: 1, attempts: 2, preemptions: 1, decisions: 14, nonDefault: 1, instances: 1 };
  it('no shape, or every pinned dimension met: no problem', () => {
    expect(minimalityProblems(undefined, size)).toEqual([]);
    expect(minimalityProblems({ operations: 1, faultsMax: 1 }, size)).toEqual([]);
    expect(minimalityProblems({ operations: 1, workers: 2, faultsMax: 1, attempts: 2, preemptions: 1 }, size)).toEqual([]);
  });
  it('one sentence per dimension that is off', () => {
    expect(minimalityProblems({ operations: 2, workers: 1, faultsMax: 0, attempts: 3, preemptions: 0 }, size)).toEqual([
      'operations 1, expected 2', 'preemptions 1, expected 0', 'workers 2, expected 1', 'faults 1, expected at most 0', 'attempts 2, expected 3',
    ]);
    expect(minimalityProblems({ operations: 1, faultsMax: 2 }, { ...size, faults: 2 })).toEqual([]);
    expect(minimalityProblems({ operations: 1, faultsMax: 2 }, { ...size, faults: 3 })).toEqual(['faults 3, expected at most 2']);
  });
});

describe('scanRuns: a slice of a claim\'s runs, in order', () => {
  it('evaluates exactly the indices its slice owns, counting what they reached', async () => {
    const slice = { shard: 1, shards: 2, worker: 0, workers: 1 };
    const progress: number[] = [];
    const s = await scanRuns({ claim: HOLDS, seed: 3, runs: 70, slice, onProgress: (n) => progress.push(n) });
    // Shard 2 of 2 owns the second block of 64: indices 64..69.
    expect(s.evaluated).toBe(6);
    expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
    expect(s.firstFailure).toBeUndefined();
    // Every run lasts one of the spans: they add up to the runs counted.
    const c = s.coverage!;
    expect((c['span:1s'] ?? 0) + (c['span:1min'] ?? 0) + (c['span:1h'] ?? 0)).toBe(6);
    expect(Math.max(...Object.values(c))).toBeLessThanOrEqual(6);
  });

  it('the whole campaign by default; stops before an index another slice already failed below', async () => {
    expect((await scanRuns({ claim: HOLDS, seed: 3, runs: 5 })).evaluated).toBe(5);
    const seen: number[] = [];
    const s = await scanRuns({ claim: HOLDS, seed: 3, runs: 10, stopBefore: (i) => (seen.push(i), i >= 3) });
    expect(s.evaluated).toBe(3);
    expect(seen).toEqual([0, 1, 2, 3]);
  });

  it('stops at the deadline', async () => {
    // Readings: t0 = 100, then one before each run: 101, 102 run; 103 >= 103 stops.
    const s = await scanRuns({ claim: HOLDS, seed: 3, runs: 10, clockMs: ticking(100), deadlineMs: 103 });
    expect(s.evaluated).toBe(2);
  });

  it('the first failing index, and the time to it from the scan\'s start', async () => {
    const s = await scanRuns({ claim: REFUSE_AS_HOLDS, seed: 1, runs: 20, clockMs: ticking(100) });
    expect(s).toEqual({ evaluated: 4, firstFailure: 3, firstFailureMs: 1 });
    // In a slice: the slice's own first failure.
    const naive = await scanRuns({ claim: NAIVE, seed: 1, runs: 200, slice: { shard: 1, shards: 2, worker: 0, workers: 1 } });
    expect(naive.firstFailure).toBe(64);
    expect(naive.evaluated).toBe(1);
    // Without a clock, times are 0 (not NaN).
    expect((await scanRuns({ claim: NAIVE, seed: 1, runs: 5 })).firstFailureMs).toBe(0);
  });

  it('an exception escaping a run is that run\'s failure, with its message', async () => {
    const s = await scanRuns({ claim: HOLDS, seed: 3, runs: 10, clockMs: ticking(50), listSource: () => { throw new Error('no choices here'); } });
    expect(s).toEqual({ evaluated: 1, firstFailure: 0, firstFailureMs: 1, error: 'no choices here' });
    const t = await scanRuns({ claim: HOLDS, seed: 3, runs: 10, listSource: () => { throw 'a string'; } });
    expect(t.error).toBe('a string');
    // PCT without its factory is such an error too.
    const p = await scanRuns({ claim: HOLDS, seed: 3, runs: 10, explore: 'pct' });
    expect(p.error).toBe('explore=pct needs a pct factory');
  });

  it('random mode drives the kernel with the generated list; pct mode with a source fitted to a probe run', async () => {
    const lists: Array<readonly number[]> = [];
    await scanRuns({ claim: HOLDS, seed: 3, runs: 2, listSource: (l) => (lists.push(l), new ListChoice(l)) });
    const arb = arbitraryFor(HOLDS);
    expect(lists).toEqual([caseAt(arb, 3, 0).value.choices, caseAt(arb, 3, 1).value.choices]);
    const asked: Array<[number, number]> = [];
    const s = await scanRuns({ claim: HOLDS, seed: 3, runs: 2, explore: 'pct', pct: (seed, steps) => (asked.push([seed, steps]), new ListChoice([])) });
    expect(s.evaluated).toBe(2);
    expect(asked.map(([seed]) => seed)).toEqual([caseAt(arb, 3, 0).value.scenario.seed, caseAt(arb, 3, 1).value.scenario.seed]);
    for (const [, steps] of asked) expect(steps).toBeGreaterThan(0);
  });
});

describe('resultOf: a claim\'s verdict from its scan', () => {
  const o = { claim: HOLDS, runs: 10, seed: 9 };
  it('no failure and every owned run done: holds, with the coverage of the claim\'s situations', async () => {
    const r = await resultOf(o, { evaluated: 10, coverage: { 'span:1s': 10, 'overlap:2': 3 } });
    expect(r).toMatchObject({ claim: HOLDS, seed: 9, runs: 10, asked: 10, verdict: 'holds', shrinks: 0 });
    expect('shortfall' in r).toBe(false);
    expect(r.coverage!.runs).toBe(10);
    expect(r.coverage!.rows.map((x) => x.id)).toEqual(claimSituations(HOLDS).map((x) => x.id));
    expect(r.coverage!.rows.find((x) => x.id === 'overlap:2')!.runs).toBe(3);
    expect(r.coverage!.rows.find((x) => x.id === 'overlap:3')!.runs).toBe(0);
    // Without counts: every situation 0.
    expect((await resultOf(o, { evaluated: 10 })).coverage!.rows.every((x) => x.runs === 0)).toBe(true);
    // More than asked (a time budget with --runs as the least): holds too.
    expect((await resultOf(o, { evaluated: 11 })).verdict).toBe('holds');
  });

  it('fewer than owned: inconclusive, saying what stopped it', async () => {
    const r = await resultOf({ ...o, timeBudgetMs: 5 }, { evaluated: 9 });
    expect(r.verdict).toBe('inconclusive');
    expect(r.runs).toBe(9);
    expect(r.shortfall).toEqual({ done: 9, asked: 10, unit: 'runs', stoppedBy: 'time budget 5 ms' });
    expect((await resultOf(o, { evaluated: 0 })).shortfall).toEqual({ done: 0, asked: 10, unit: 'runs', stoppedBy: 'an early stop' });
  });

  it('a slice owes only its own runs', async () => {
    const slice = { shard: 1, shards: 2, worker: 0, workers: 1 };
    expect(ownedCount(slice, 70)).toBe(6);
    expect((await resultOf({ ...o, runs: 70, slice }, { evaluated: 6 })).verdict).toBe('holds');
    expect((await resultOf({ ...o, runs: 70, slice }, { evaluated: 5 })).verdict).toBe('inconclusive');
  });

  it('an escaped exception: fails at that run, no counterexample; runs are first failure + 1 (without a budget)', async () => {
    const scan: ScanResult = { evaluated: 2, firstFailure: 6, firstFailureMs: 12, error: 'boom' };
    const r = await resultOf(o, scan);
    expect(r).toEqual({ claim: HOLDS, seed: 9, shrinks: 0, asked: 10, runs: 7, verdict: 'fails', firstFailureMs: 12, firstFailureRun: 7, error: 'boom' });
    // With a time budget the runs are those evaluated (a deadline may have left gaps below).
    expect((await resultOf({ ...o, timeBudgetMs: 100 }, scan)).runs).toBe(2);
  });

  it('a failure is shrunk, minimised and counted as first failure + 1 runs', async () => {
    const r = await resultOf({ claim: NAIVE, runs: 10, seed: 1 }, { evaluated: 1, firstFailure: 0, firstFailureMs: 3 });
    expect(r).toMatchObject({ verdict: 'fails', runs: 1, firstFailureRun: 1, firstFailureMs: 3 });
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(r.counterexample!.notMinimal).toEqual([]);
    expect(r.error).toBeUndefined();
    expect(r.coverage).toBeUndefined();
  });
});

describe('runCampaign under a time budget', () => {
  it('stops at the budget, inconclusive when short; with untilBudget goes past the runs asked', async () => {
    // Readings: deadline = 1000 + 3; t0 = 1001; 1002 runs index 0; 1003 stops.
    const short = await runCampaign({ claim: HOLDS, runs: 10, seed: 3, timeBudgetMs: 3, clockMs: ticking(1000) });
    expect(short).toMatchObject({ verdict: 'inconclusive', runs: 1, asked: 10, shortfall: { done: 1, asked: 10, unit: 'runs', stoppedBy: 'time budget 3 ms' } });
    // 1002, 1003, 1004 run; 1005 stops: three runs, past the one asked.
    const until = await runCampaign({ claim: HOLDS, runs: 1, seed: 3, timeBudgetMs: 5, untilBudget: true, clockMs: ticking(1000) });
    expect(until).toMatchObject({ verdict: 'holds', runs: 3, asked: 1 });
    expect(until.coverage!.runs).toBe(3);
    // Without untilBudget the runs asked are the most.
    expect((await runCampaign({ claim: HOLDS, runs: 2, seed: 3, timeBudgetMs: 5, clockMs: ticking(1000) })).runs).toBe(2);
    // Without a budget no deadline: all runs, untilBudget or not (it only means something with a budget).
    expect((await runCampaign({ claim: HOLDS, runs: 4, seed: 3, clockMs: ticking(1000) })).runs).toBe(4);
    expect((await runCampaign({ claim: HOLDS, runs: 3, seed: 3, untilBudget: true })).runs).toBe(3);
  });

  it('reports progress after every run', async () => {
    const done: number[] = [];
    await runCampaign({ claim: HOLDS, runs: 3, seed: 3, onProgress: (n) => done.push(n) });
    expect(done).toEqual([1, 2, 3]);
  });
});

describe('shrinkCase: fast-check\'s shrinking within a run budget', () => {
  const arb = fc.integer({ min: 0, max: 1_000_000 }) as unknown as fc.Arbitrary<GeneratedCase>;
  const start = new fc.Value(777_777 as unknown as GeneratedCase, undefined);
  const atLeast10 = (calls: { n: number }) => async (x: GeneratedCase) => (calls.n++, (x as unknown as number) >= 10);

  it('greedily to a local minimum, stopping there before the budget', async () => {
    const calls = { n: 0 };
    const r = await shrinkCase(arb, start, atLeast10(calls), 1000);
    expect(r.value).toBe(10);
    expect(r.shrinks).toBeGreaterThan(1);
    expect(calls.n).toBeLessThan(1000);
  });

  it('never more runs than the budget (40 by default)', async () => {
    expect(SHRINK_RUNS_MAX).toBe(40);
    for (const budget of [0, 1, 5]) {
      const calls = { n: 0 };
      const r = await shrinkCase(arb, start, atLeast10(calls), budget);
      expect(calls.n).toBe(budget);
      if (budget === 0) expect(r).toEqual({ value: 777_777, shrinks: 0 });
    }
    const calls = { n: 0 };
    const never = async () => (calls.n++, false);
    const big = fc.array(fc.integer(), { minLength: 200, maxLength: 200 }) as unknown as fc.Arbitrary<GeneratedCase>;
    const v = big.generate(new fc.Random(xoroshiro128plus(1)), undefined);
    const r = await shrinkCase(big, v, never);
    expect(calls.n).toBe(40);
    expect(r.shrinks).toBe(0);
  });

  it('a shrink budget that expires stops it before the next run, wherever it is (a clock that expires after 3 runs: 3 runs)', async () => {
    const calls = { n: 0 };
    const r = await shrinkCase(arb, start, atLeast10(calls), 1000, () => calls.n >= 3);
    expect(calls.n).toBe(3);
    expect(r.value).toBeGreaterThanOrEqual(10);
    const none = { n: 0 };
    expect(await shrinkCase(arb, start, atLeast10(none), 1000, () => true)).toEqual({ value: 777_777, shrinks: 0 });
    expect(none.n).toBe(0);
  });
});

describe('counterexamples: minimised, saved and replayable', () => {
  it('a failure is written as a scenario file named by variant, invariant and hash, whose expect is the violation', async () => {
    const dir = tmp('rs-run-');
    const r = await runCampaign({ claim: NAIVE, runs: 10, seed: 1, foundDir: dir });
    const cx = r.counterexample!;
    expect(cx.file).toBeDefined();
    expect(basename(cx.file!)).toBe(`naive-exactly-one-${hashJson(cx.scenario).slice(0, 8)}.json`);
    expect(readFileSync(cx.file!, 'utf8')).toBe(printScenario(cx.scenario));
    expect(cx.replay).toBe(`retrysim replay ${cx.file} --trace`);
    const s = loadScenario(cx.file!);
    expect(s.name).toBe('naive-none-fails: shrunk counterexample');
    expect(s.description).toMatch(/^Found by retrysim check \(claim naive-none-fails, claim seed 1\): exactly-one — .+\.$/);
    expect(s.expect.violations).toEqual(['exactly-one']);
    expect(s.expect.reports).toEqual({ op1: 2 });
    // It replays to the same violations from its recorded schedule.
    const again = await runScenario(s, { choices: new ReplayChoice(s.schedule) });
    expect(again.violations).toEqual(cx.violations);
    // The claim's minimal shape: one operation, one worker, one fault, two attempts.
    expect(cx.size).toMatchObject({ operations: 1, workers: 1, faults: 1, attempts: 2, preemptions: 0 });
    expect(cx.minimised).toMatchObject({ preemptionsMinimal: true });
  });

  it('a canary that names its invariant names the file by it; a holding claim by the first it breaks', async () => {
    const dir = tmp('rs-run-');
    const named = await runCampaign({ claim: REFUSE, runs: 20, seed: 1, foundDir: dir });
    expect(basename(named.counterexample!.file!)).toMatch(/^key_atomic_refuse_keyed-progress-[0-9a-f]{8}\.json$/);
    const unnamed = await runCampaign({ claim: REFUSE_AS_HOLDS, runs: 20, seed: 1, foundDir: dir });
    expect(basename(unnamed.counterexample!.file!)).toMatch(/^key_atomic_refuse_keyed-progress-[0-9a-f]{8}\.json$/);
    // A case that breaks nothing (saved directly): the file says "violation".
    const c = caseAt(arbitraryFor(HOLDS), 3, 0).value;
    const ok = await saveCounterexample(c, HOLDS, 3, () => new ListChoice(c.choices), dir);
    expect(basename(ok.file!)).toMatch(/^key_atomic-violation-[0-9a-f]{8}\.json$/);
    expect(ok.scenario.expect.violations).toEqual([]);
    expect(existsSync(ok.file!)).toBe(true);
  });

  it('without a found directory nothing is written and the replay line says so', async () => {
    const r = await runCampaign({ claim: NAIVE, runs: 10, seed: 1 });
    expect('file' in r.counterexample!).toBe(false);
    expect(r.counterexample!.replay).toBe('(not written: pass a found directory)');
  });

  it('minimise: false keeps fast-check\'s shrunk case as it is', async () => {
    const o = { claim: NAIVE, runs: 10, seed: 1 };
    const plain = await finishFailure({ ...o, minimise: false }, 0);
    expect(plain.counterexample.minimised).toBeUndefined();
    expect(plain.counterexample.violations.map((v) => v.invariant)).toContain('exactly-one');
    const full = await finishFailure(o, 0);
    expect(full.counterexample.minimised).toBeDefined();
    expect(full.shrinks).toBe(plain.shrinks);
  });

  it('the invariant kept while minimising: the named one when broken, else none (any violation)', () => {
    expect(targetInvariant(NAIVE, run('exactly-one'))).toBe('exactly-one');
    expect(targetInvariant(NAIVE, run('progress'))).toBeUndefined();
    expect(targetInvariant(REFUSE, run('exactly-one', 'progress'))).toBe('progress');
    expect(targetInvariant(HOLDS, run('exactly-one'))).toBe('exactly-one');
  });
});

describe('finishing a failure: the schedule it needs is kept', () => {
  it('fast-check shrinks the first failing case before the minimiser', async () => {
    const r = await runCampaign({ claim: NAIVE, runs: 10, seed: 1 });
    expect(r.shrinks).toBeGreaterThan(0);
    expect(r.shrinks).toBeLessThanOrEqual(SHRINK_RUNS_MAX);
  });

  it('a race kept through shrinking, saving and minimising: one preemption, two workers', async () => {
    const r = await runCampaign({ claim: RACE, runs: 50, seed: 1 });
    expect(r).toMatchObject({ verdict: 'fails', firstFailureRun: 9 });
    expect(r.counterexample!.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
    expect(r.counterexample!.size).toMatchObject({ operations: 1, workers: 2, faults: 0, attempts: 2, preemptions: 1 });
    expect(r.counterexample!.notMinimal).toEqual([]);
    // Without the minimiser, the shrunk case is saved with the schedule that failed.
    const plain = await finishFailure({ claim: RACE, runs: 50, seed: 1, minimise: false }, 8);
    expect(plain.counterexample.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
    expect(plain.counterexample.size.preemptions).toBe(1);
  });

  it('a failure found by PCT is shrunk and saved under PCT schedules', async () => {
    const calls: number[] = [];
    const pct = (seed: number, steps: number) => (calls.push(seed), campaignPct(seed, steps));
    const scan = await scanRuns({ claim: RACE, seed: 1, runs: 50, explore: 'pct', pct });
    expect(scan.firstFailure).toBe(5);
    calls.length = 0;
    const { counterexample } = await finishFailure({ claim: RACE, runs: 50, seed: 1, explore: 'pct', pct }, 5);
    expect(calls.length).toBeGreaterThan(1);
    expect(counterexample.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
  });

  it('minimising a holding claim\'s failure keeps some violation (the fault it needs stays)', async () => {
    const r = await runCampaign({ claim: NAIVE_AS_HOLDS, runs: 10, seed: 1 });
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(r.counterexample!.size).toMatchObject({ faults: 1, attempts: 2 });
  });

  it('minimising a holding claim\'s failure on another invariant than exactly-one keeps a violation too', async () => {
    // A lease that never expires, claimed to hold: a kill leaves the key in progress forever (progress), and the kill must stay.
    const claim: Claim = { ...claimById('key_atomic_no_expiry-tool_call-fails'), id: 'no-expiry-expected-to-hold', expected: 'holds', violation: undefined, minimal: undefined };
    const r = await runCampaign({ claim, runs: 50, seed: 1 });
    expect(r.firstFailureRun).toBe(13);
    expect(r.counterexample!.violations.map((v) => v.invariant)).toEqual(['progress']);
    expect(r.counterexample!.size.faults).toBe(1);
  });

  // refuse_keyed with a fresh key per attempt: a retry breaks stable-key, and nothing ever succeeds (progress).
  const PER_ATTEMPT_REFUSE: Claim = { ...REFUSE, id: 'refuse-per-attempt', keySource: 'per_attempt', minimal: undefined };
  const twoBroken = () => ({ scenario: smallScenarios(PER_ATTEMPT_REFUSE)[0]!, choices: [] });

  it('minimising a canary\'s failure keeps the invariant it names, not just any', async () => {
    const c = twoBroken();
    const first = await runScenario(c.scenario, { choices: new ListChoice([]) });
    expect(first.violations.map((v) => v.invariant)).toEqual(['stable-key', 'progress']);
    // Named stable-key: the second attempt must stay.
    const kept = await minimiseAndSave(c, { ...PER_ATTEMPT_REFUSE, violation: 'stable-key' }, 1, new ListChoice([]), undefined);
    expect(kept.violations.map((v) => v.invariant)).toEqual(['stable-key', 'progress']);
    expect(kept.size.attempts).toBe(2);
    // Named an invariant this failure does not break: any violation is kept, and one attempt is enough for progress.
    const any = await minimiseAndSave(c, { ...PER_ATTEMPT_REFUSE, violation: 'tenant-isolation' }, 1, new ListChoice([]), undefined);
    expect(any.violations.map((v) => v.invariant)).toEqual(['progress']);
  });

  it('the saved file lists its invariants sorted, describes each, and is named by the claim\'s when it breaks it', async () => {
    const dir = tmp('rs-run-');
    const c = twoBroken();
    const save = (violation: Claim['violation']) => saveCounterexample(c, { ...PER_ATTEMPT_REFUSE, violation }, 4, () => new ListChoice([]), dir);
    const named = await save('stable-key');
    expect(named.scenario.expect.violations).toEqual(['progress', 'stable-key']);
    expect(named.scenario.description).toMatch(/^Found by retrysim check \(claim refuse-per-attempt, claim seed 4\): stable-key — call call-1 sent 2 different keys across its attempts; progress — .+\.$/);
    expect(basename(named.file!)).toMatch(/^key_atomic_refuse_keyed-stable-key-[0-9a-f]{8}\.json$/);
    // Not broken (or none named): the first of the sorted invariants.
    expect(basename((await save('exactly-one')).file!)).toMatch(/^key_atomic_refuse_keyed-progress-/);
    expect(basename((await save(undefined)).file!)).toMatch(/^key_atomic_refuse_keyed-progress-/);
  });
});

describe('a claim\'s generator and situations', () => {
  it('with a module path the scenario names the module instead of the built-in variant', () => {
    const plain = caseAt(arbitraryFor(HOLDS), 3, 0).value.scenario;
    expect(plain.service.variant).toBe('key_atomic');
    expect(withModule(plain, undefined)).toBe(plain);
    const mod = caseAt(arbitraryFor(HOLDS, 'svc.ts'), 3, 0).value.scenario;
    expect(mod.service.module).toBe('svc.ts');
    expect('variant' in mod.service).toBe(false);
    expect({ ...mod, service: { ...mod.service, module: undefined, variant: 'key_atomic' } }).toEqual({ ...plain, service: { ...plain.service, module: undefined } });
  });

  it('the situations of a claim are those of its variant, faults and key source', () => {
    expect(claimSituations(REFUSE)).toEqual(situationsOf({ def: builtinService('key_atomic_refuse_keyed'), faults: [], keySource: 'tool_call' }));
    expect(claimSituations(HOLDS).map((s) => s.id)).toContain('crash@after-process');
    expect(claimSituations(NAIVE).map((s) => s.id)).not.toContain('overlap:2');
  });
});
