/**
 * Shard merge as unit tests over hand-written shard files: what it refuses
 * (files no `check --shard` run writes, shards of different campaigns) and
 * how it combines per-claim results (lowest failure, summed runs and
 * coverage, inconclusive when a shard or the bounded part stopped short).
 * shard.test.ts shows on real campaigns that merging equals not sharding.
 */
import { describe, expect, it } from 'vitest';
import { claimById } from './claims.js';
import type { CampaignResult } from './run.js';
import { mergeShards, parseShardFile, SHARD_FORMAT, ShardError, shardFile, type ShardFile } from './shard.js';

const HOLDS = 'key_atomic-tool_call-holds';
const NAIVE = 'naive-none-fails';
type Result = ShardFile['results'][number];

function res(claim: string, o: Partial<Result> = {}): Result {
  return { claim, seed: 11, runs: 0, verdict: 'holds', shrinks: 0, ...o } as Result;
}

function file(index: number, count: number, results: Result[], o: Partial<ShardFile> = {}): ShardFile {
  return { format: SHARD_FORMAT, seed: 1, runs: 200, explore: 'random', timeBudgetMs: null, shard: { index, count }, wallMs: 10 * (index + 1), results, ...o };
}

const named = (...fs: ShardFile[]) => fs.map((f, i) => ({ source: `s${i + 1}.json`, file: f }));
const cov = (runs: number, rows: Array<[string, number]>) => ({ runs, rows: rows.map(([id, n]) => ({ id, what: id, runs: n })) });
// The numbers below: shard 1/2 of a 200-run campaign owns indices 0..63 and 128..191 (128 runs); shard 2/2 64..127 and 192..199 (72).

function refusal(fs: ShardFile[]): string {
  try {
    mergeShards(named(...fs));
  } catch (e) {
    expect(e).toBeInstanceOf(ShardError);
    return (e as Error).message;
  }
  throw new Error('merged');
}

describe('mergeShards refuses counts no check run writes', () => {
  const tail = '; not counts retrysim check writes (edited or truncated?)';
  it('more runs than the shard owns (the audit\'s 301 runs of a 300-run campaign)', () => {
    expect(refusal([file(0, 1, [res(HOLDS, { runs: 301 })], { runs: 300 })])).toBe(`s1.json: claim ${HOLDS}: 301 runs, but shard 1/1 of a 300-run campaign owns 300${tail}`);
    expect(refusal([file(0, 2, [res(HOLDS, { runs: 129 })]), file(1, 2, [res(HOLDS, { runs: 72 })])])).toBe(`s1.json: claim ${HOLDS}: 129 runs, but shard 1/2 of a 200-run campaign owns 128${tail}`);
    // Even with a time budget: a budget only ever stops a shard short.
    expect(refusal([file(0, 1, [res(HOLDS, { runs: 201, verdict: 'inconclusive' })], { timeBudgetMs: 5 })])).toMatch(/201 runs, but shard 1\/1 of a 200-run campaign owns 200/);
  });

  it('fewer runs without a failure or a time budget', () => {
    expect(refusal([file(0, 2, [res(HOLDS, { runs: 127 })]), file(1, 2, [res(HOLDS, { runs: 72 })])])).toBe(`s1.json: claim ${HOLDS}: 127 runs without a failure or a time budget, but shard 1/2 of a 200-run campaign owns 128${tail}`);
    expect(refusal([file(0, 1, [res(HOLDS, { runs: 199, verdict: 'inconclusive' })])])).toMatch(/199 runs without a failure or a time budget/);
  });

  it('"holds" after fewer runs than owned, with a time budget', () => {
    expect(refusal([file(0, 1, [res(HOLDS, { runs: 150 })], { timeBudgetMs: 5 })])).toBe(`s1.json: claim ${HOLDS}: verdict holds after 150 of the 200 runs it owns${tail}`);
  });

  it('a first failing run beyond the campaign, or not the shard\'s own', () => {
    expect(refusal([file(0, 1, [res(NAIVE, { verdict: 'fails', runs: 201, firstFailureRun: 201 })])])).toBe(`s1.json: claim ${NAIVE}: first failing run 201 is beyond the campaign's 200 runs${tail}`);
    expect(refusal([file(0, 2, [res(NAIVE, { verdict: 'fails', runs: 65, firstFailureRun: 65 })]), file(1, 2, [res(NAIVE, { runs: 72 })])])).toBe(`s1.json: claim ${NAIVE}: first failing run 65 is not one of shard 1/2's runs${tail}`);
    expect(refusal([file(0, 2, [res(NAIVE, { runs: 128 })]), file(1, 2, [res(NAIVE, { verdict: 'fails', runs: 64, firstFailureRun: 64 })])])).toMatch(/first failing run 64 is not one of shard 2\/2's runs/);
  });

  it('a bounded-exhaustive part outside shard 1, and coverage that counts other runs than ran', () => {
    const bounded = { scenarios: 1, operationsMax: 1, workersMax: 1, faultsMax: 0, schedules: 5, complete: true, schedulesMax: 20, blocked: 0 };
    expect(refusal([file(0, 2, [res(HOLDS, { runs: 128 })]), file(1, 2, [res(HOLDS, { runs: 72, bounded })])])).toBe(`s2.json: claim ${HOLDS}: a bounded-exhaustive part outside shard 1${tail}`);
    expect(refusal([file(0, 1, [res(HOLDS, { runs: 200, coverage: cov(199, []) })])])).toBe(`s1.json: claim ${HOLDS}: coverage counts 199 runs, but 200 ran${tail}`);
    // The bounded part's schedules count as runs of the coverage.
    expect(refusal([file(0, 1, [res(HOLDS, { runs: 200, bounded, coverage: cov(200, []) })])])).toMatch(/coverage counts 200 runs, but 205 ran/);
    expect(refusal([file(0, 1, [res(HOLDS, { runs: 200, coverage: cov(200, [['replay', 201]]) })])])).toBe(`s1.json: claim ${HOLDS}: coverage says 201 runs reached 'replay', of 200${tail}`);
    // A failure of the bounded part (complete set): its runs are schedules, not the shard's run indices.
    const m = mergeShards(named(file(0, 1, [res(HOLDS, { runs: 500, verdict: 'fails', complete: false, firstFailureRun: 500, coverage: cov(5, []), bounded })])));
    expect(m.results[0]).toMatchObject({ verdict: 'fails', runs: 500, firstFailureRun: 500 });
  });

  it('counts a check run writes are accepted: all owned runs, or fewer under a time budget', () => {
    expect(mergeShards(named(file(0, 1, [res(HOLDS, { runs: 200, coverage: cov(200, [['replay', 200]]) })]))).results[0]!.verdict).toBe('holds');
    expect(mergeShards(named(file(0, 1, [res(HOLDS, { runs: 150, verdict: 'inconclusive' })], { timeBudgetMs: 5 }))).results[0]!.verdict).toBe('inconclusive');
    // Past the runs with a budget of its own (--time-budget without --runs): no owned count to hold it to.
    const until = mergeShards(named(file(0, 1, [res(HOLDS, { runs: 900 }), res(NAIVE, { verdict: 'fails', runs: 700, firstFailureRun: 700 })], { timeBudgetMs: 5, untilBudget: true })));
    expect(until.results.map((r) => [r.verdict, r.runs])).toEqual([['holds', 900], ['fails', 700]]);
  });
});

describe('mergeShards refuses shards of different campaigns', () => {
  const a = file(0, 2, [res(HOLDS, { runs: 128 })]);
  const b = file(1, 2, [res(HOLDS, { runs: 72 })]);
  it('no file, another seed, run count, budget or exploration', () => {
    expect(() => mergeShards([])).toThrow(new ShardError('no shard files given'));
    expect(refusal([a, { ...b, seed: 2 }])).toBe("s2.json: seed 2 differs from s1.json's 1: not shards of one campaign");
    expect(refusal([a, { ...b, runs: 300 }])).toBe("s2.json: runs 300 differs from s1.json's 200: not shards of one campaign");
    expect(refusal([a, { ...b, untilBudget: true }])).toBe("s2.json: untilBudget true differs from s1.json's undefined: not shards of one campaign");
    expect(refusal([a, { ...b, explore: 'pct' }])).toBe('s2.json: explore "pct" differs from s1.json\'s "random": not shards of one campaign');
    expect(refusal([a, { ...b, timeBudgetMs: 5 }])).toBe("s2.json: timeBudgetMs 5 differs from s1.json's null: not shards of one campaign");
  });

  it('another shard count, a shard twice, a shard missing, other claims', () => {
    expect(refusal([a, { ...b, shard: { index: 1, count: 3 } }])).toBe("s2.json: shard count 3 differs from s1.json's 2");
    expect(refusal([a, a])).toBe('s2.json: shard 1/2 is also in s1.json');
    expect(refusal([a])).toBe("missing shard 2/2 (give every shard's --out file)");
    expect(refusal([file(0, 3, [res(HOLDS, { runs: 72 })])])).toBe("missing shards 2/3, 3/3 (give every shard's --out file)");
    expect(refusal([a, { ...b, results: [res(NAIVE, { runs: 72 })] }])).toBe(`s2.json: its claims (${NAIVE}) differ from s1.json's`);
    expect(refusal([a, { ...b, results: [res(HOLDS, { runs: 72 }), res(NAIVE, { runs: 72 })] }])).toBe(`s2.json: its claims (${HOLDS},${NAIVE}) differ from s1.json's`);
  });
});

describe('mergeShards combines a claim\'s shards', () => {
  it('no failure: holds over the runs of every shard, coverage summed, the campaign\'s seed, exploration and slowest shard', () => {
    const bounded = { scenarios: 3, operationsMax: 1, workersMax: 2, faultsMax: 1, schedules: 10, complete: true, schedulesMax: 20, blocked: 4 };
    const m = mergeShards(named(
      file(0, 2, [res(HOLDS, { runs: 128, bounded, coverage: cov(138, [['replay', 100], ['overlap:3', 0]]) })], { wallMs: 30 }),
      file(1, 2, [res(HOLDS, { runs: 72, coverage: cov(72, [['replay', 70], ['overlap:3', 1]]) })], { wallMs: 20 }),
    ));
    expect(m.seed).toBe(1);
    expect(m.explore).toBe('random');
    expect(m.wallMs).toBe(30);
    const r = m.results[0]!;
    expect(r.claim).toBe(claimById(HOLDS));
    expect(r).toMatchObject({ verdict: 'holds', runs: 200, asked: 200, shrinks: 0, bounded });
    expect(r.coverage).toEqual(cov(210, [['replay', 170], ['overlap:3', 1]]));
    expect('shortfall' in r).toBe(false);
    // Without coverage or a bounded part, neither appears.
    const plain = mergeShards(named(file(0, 2, [res(HOLDS, { runs: 128 })]), file(1, 2, [res(HOLDS, { runs: 72 })]))).results[0]!;
    expect('coverage' in plain || 'bounded' in plain).toBe(false);
  });

  it('a shard stopped short by a time budget: inconclusive, done of asked', () => {
    const m = mergeShards(named(
      file(0, 2, [res(HOLDS, { runs: 128 })], { timeBudgetMs: 5 }),
      file(1, 2, [res(HOLDS, { runs: 40, verdict: 'inconclusive', shortfall: { done: 40, asked: 200, unit: 'runs', stoppedBy: 'time budget 5 ms' } })], { timeBudgetMs: 5 }),
    ));
    expect(m.results[0]).toMatchObject({ verdict: 'inconclusive', runs: 168, shortfall: { done: 168, asked: 200, unit: 'runs', stoppedBy: 'time budget 5 ms' } });
  });

  it('a shard that says inconclusive over all its runs, or an unfinished bounded part, is inconclusive too', () => {
    const short = mergeShards(named(file(0, 2, [res(HOLDS, { runs: 128 })]), file(1, 2, [res(HOLDS, { runs: 72, verdict: 'inconclusive' })])));
    expect(short.results[0]).toMatchObject({ verdict: 'inconclusive', runs: 200, shortfall: { done: 200, asked: 200, unit: 'runs', stoppedBy: 'a shard that stopped short' } });
    const bounded = { scenarios: 3, operationsMax: 1, workersMax: 2, faultsMax: 1, schedules: 60, complete: false, schedulesMax: 20, blocked: 0 };
    const cut = mergeShards(named(file(0, 2, [res(HOLDS, { runs: 128, bounded, shortfall: { done: 1, asked: 2, unit: 'runs', stoppedBy: 'x' } })]), file(1, 2, [res(HOLDS, { runs: 72 })])));
    expect(cut.results[0]).toMatchObject({ verdict: 'inconclusive', runs: 200, shortfall: { done: 60, asked: 20, unit: 'schedules', stoppedBy: 'the schedule limit of 20 per small scenario' } });
    // Both short: the runs are what the row says.
    const both = mergeShards(named(file(0, 2, [res(HOLDS, { runs: 100, verdict: 'inconclusive', bounded })], { timeBudgetMs: 5 }), file(1, 2, [res(HOLDS, { runs: 72 })], { timeBudgetMs: 5 })));
    expect(both.results[0]!.shortfall).toEqual({ done: 172, asked: 200, unit: 'runs', stoppedBy: 'time budget 5 ms' });
    // A complete bounded part and all runs: holds, and a stale shortfall in shard 1 does not survive.
    const done = mergeShards(named(file(0, 2, [res(HOLDS, { runs: 128, bounded: { ...bounded, complete: true }, shortfall: { done: 1, asked: 2, unit: 'runs', stoppedBy: 'x' } })]), file(1, 2, [res(HOLDS, { runs: 72 })])));
    expect(done.results[0]!.verdict).toBe('holds');
    expect('shortfall' in done.results[0]!).toBe(false);
  });

  it('failures: the lowest failing run decides, and the campaign covered that many runs', () => {
    const cx = { size: {}, violations: [{ invariant: 'exactly-one' }], notMinimal: [] };
    const m = mergeShards(named(
      file(0, 2, [res(NAIVE, { verdict: 'fails', runs: 130, firstFailureRun: 130, counterexample: { ...cx, notMinimal: ['late'] } as never })]),
      file(1, 2, [res(NAIVE, { verdict: 'fails', runs: 66, firstFailureRun: 66, firstFailureMs: 9, counterexample: cx as never, coverage: cov(66, []) })]),
    ));
    const r = m.results[0]!;
    expect(r).toMatchObject({ verdict: 'fails', runs: 66, firstFailureRun: 66, firstFailureMs: 9 });
    expect(r.counterexample!.notMinimal).toEqual([]);
    expect('coverage' in r).toBe(false);
    // Under a time budget the runs are all the shards ran.
    const timed = mergeShards(named(file(0, 2, [res(NAIVE, { verdict: 'fails', runs: 70, firstFailureRun: 130 })], { timeBudgetMs: 5 }), file(1, 2, [res(NAIVE, { runs: 50, verdict: 'inconclusive' })], { timeBudgetMs: 5 })));
    expect(timed.results[0]).toMatchObject({ verdict: 'fails', runs: 120, firstFailureRun: 130 });
    // A failing shard 2 with a bounded part that held in shard 1: the row keeps the bounded part.
    const bounded = { scenarios: 1, operationsMax: 1, workersMax: 1, faultsMax: 0, schedules: 5, complete: true, schedulesMax: 20, blocked: 0 };
    const withB = mergeShards(named(file(0, 2, [res(HOLDS, { runs: 128, bounded })]), file(1, 2, [res(HOLDS, { verdict: 'fails', runs: 65, firstFailureRun: 65 })])));
    expect(withB.results[0]).toMatchObject({ verdict: 'fails', runs: 65, bounded });
  });

  it('a failure of the bounded-exhaustive part decides before any random failure', () => {
    const m = mergeShards(named(
      file(0, 2, [res(NAIVE, { verdict: 'fails', runs: 3, complete: false, firstFailureRun: 3 })]),
      file(1, 2, [res(NAIVE, { verdict: 'fails', runs: 65, firstFailureRun: 65 })]),
    ));
    expect(m.results[0]).toMatchObject({ verdict: 'fails', runs: 3, complete: false, firstFailureRun: 3 });
    expect(m.results[0]!.claim).toBe(claimById(NAIVE));
    // As runExhaustive writes it: schedules, the first failure the failing schedule's index, not a run of the random campaign.
    const bounded = { scenarios: 2, operationsMax: 1, workersMax: 1, faultsMax: 1, schedules: 3, complete: true, schedulesMax: 20, blocked: 0 };
    const alone = mergeShards(named(file(0, 2, [res(HOLDS, { verdict: 'fails', runs: 3, complete: true, firstFailureRun: 3, bounded })]), file(1, 2, [res(HOLDS, { runs: 72 })])));
    expect(alone.results[0]).toMatchObject({ verdict: 'fails', runs: 3, complete: true, firstFailureRun: 3, bounded });
    const before = mergeShards(named(file(0, 2, [res(HOLDS, { verdict: 'fails', runs: 3, complete: true, firstFailureRun: 3, bounded })]), file(1, 2, [res(HOLDS, { verdict: 'fails', runs: 65, firstFailureRun: 65 })])));
    expect(before.results[0]).toMatchObject({ verdict: 'fails', runs: 3, complete: true, firstFailureRun: 3 });
  });

  it('exhaustive shards that held are summed like any others (only a failing one decides alone)', () => {
    const m = mergeShards(named(file(0, 2, [res(HOLDS, { runs: 128, complete: true })]), file(1, 2, [res(HOLDS, { runs: 72, complete: true })])));
    expect(m.results[0]).toMatchObject({ verdict: 'holds', runs: 200 });
  });

  it('the bounded part is found in shard 1 whatever the order the files are given in', () => {
    const bounded = { scenarios: 1, operationsMax: 1, workersMax: 1, faultsMax: 0, schedules: 5, complete: true, schedulesMax: 20, blocked: 0 };
    const failing = mergeShards(named(file(1, 2, [res(HOLDS, { verdict: 'fails', runs: 65, firstFailureRun: 65 })]), file(0, 2, [res(HOLDS, { runs: 128, bounded })])));
    expect(failing.results[0]).toMatchObject({ verdict: 'fails', runs: 65, bounded });
    const holding = mergeShards(named(file(1, 2, [res(HOLDS, { runs: 72 })]), file(0, 2, [res(HOLDS, { runs: 128, bounded })])));
    expect(holding.results[0]).toMatchObject({ verdict: 'holds', runs: 200, bounded });
  });

  it('every claim merged on its own, in the files\' order', () => {
    const m = mergeShards(named(file(0, 1, [res(NAIVE, { verdict: 'fails', runs: 1, firstFailureRun: 1 }), res(HOLDS, { runs: 200 })])));
    expect(m.results.map((r) => [r.claim.id, r.verdict, r.runs])).toEqual([[NAIVE, 'fails', 1], [HOLDS, 'holds', 200]]);
  });
});

describe('parseShardFile: a shard file, or one line naming the file and what is wrong', () => {
  const good = file(0, 1, [res(HOLDS, { runs: 200 })]);
  const bad = (edit: (f: Record<string, unknown>) => void) => {
    const f = JSON.parse(JSON.stringify(good)) as Record<string, unknown>;
    edit(f);
    try {
      parseShardFile(JSON.stringify(f), 'x.json');
    } catch (e) {
      expect(e).toBeInstanceOf(ShardError);
      return (e as Error).message;
    }
    return 'accepted';
  };
  const r0 = (f: Record<string, unknown>) => (f.results as Array<Record<string, unknown>>)[0]!;

  it('reads what shardFile writes', () => {
    const rs = [{ claim: claimById(HOLDS), seed: 11, runs: 200, verdict: 'holds', shrinks: 0 } as CampaignResult];
    const f = shardFile({ seed: 1, runs: 200, explore: 'random', timeBudgetMs: null, shard: { index: 0, count: 1 }, wallMs: 10 }, rs);
    expect(f.format).toBe('retrysim.shard/1');
    expect(f.results[0]!.claim).toBe(HOLDS);
    expect(parseShardFile(JSON.stringify(f), 'x.json')).toEqual(f);
    expect(bad(() => {})).toBe('accepted');
  });

  it('not JSON, or not the format', () => {
    expect(() => parseShardFile('nope', 'x.json')).toThrow(/^x\.json: not JSON: /);
    expect(() => parseShardFile('[]', 'x.json')).toThrow(/^x\.json: not a retrysim\.shard\/1 file: at \(root\): /);
    expect(bad((f) => (f.format = 'retrysim.shard/2'))).toMatch(/^x\.json: not a retrysim\.shard\/1 file: at format: /);
    expect(bad((f) => (f.extra = 1))).toMatch(/at \(root\): .*extra/);
  });

  it('each field checked: the path names it', () => {
    const cases: Array<[string, (f: Record<string, unknown>) => void]> = [
      ['seed', (f) => (f.seed = 1.5)],
      ['runs', (f) => (f.runs = 0)],
      ['runs', (f) => (f.runs = 2.5)],
      ['untilBudget', (f) => (f.untilBudget = false)],
      ['explore', (f) => (f.explore = 'exhaustive')],
      ['timeBudgetMs', (f) => (f.timeBudgetMs = 0)],
      ['shard.index', (f) => (f.shard = { index: -1, count: 1 })],
      ['shard.index', (f) => (f.shard = { index: 0.5, count: 1 })],
      ['shard.index', (f) => (f.shard = { index: 1, count: 1 })],
      ['shard.count', (f) => (f.shard = { index: 0, count: 0 })],
      ['shard.count', (f) => (f.shard = { index: 0, count: 1.5 })],
      ['shard', (f) => (f.shard = { index: 0, count: 1, of: 2 })],
      ['wallMs', (f) => (f.wallMs = -1)],
      ['results.0.claim', (f) => (r0(f).claim = 'no-such-claim')],
      ['results.0.seed', (f) => (r0(f).seed = -1)],
      ['results.0.runs', (f) => (r0(f).runs = 'many')],
      ['results.0.verdict', (f) => (r0(f).verdict = 'refuted')],
      ['results.0.shrinks', (f) => (r0(f).shrinks = 1.5)],
      ['results.0.complete', (f) => (r0(f).complete = 'yes')],
      ['results.0.bounded.schedules', (f) => (r0(f).bounded = { schedules: -1, complete: true })],
      ['results.0.bounded.complete', (f) => (r0(f).bounded = { schedules: 1 })],
      ['results.0.coverage.runs', (f) => (r0(f).coverage = { runs: -1, rows: [] })],
      ['results.0.coverage', (f) => (r0(f).coverage = { runs: 1, rows: [], more: 1 })],
      ['results.0.coverage.rows.0.runs', (f) => (r0(f).coverage = { runs: 1, rows: [{ id: 'a', what: 'a', runs: -1 }] })],
      ['results.0.coverage.rows.0.id', (f) => (r0(f).coverage = { runs: 1, rows: [{ id: 1, what: 'a', runs: 1 }] })],
      ['results.0.coverage.rows.0.what', (f) => (r0(f).coverage = { runs: 1, rows: [{ id: 'a', runs: 1 }] })],
      ['results.0.coverage.rows.0', (f) => (r0(f).coverage = { runs: 1, rows: [{ id: 'a', what: 'a', runs: 1, x: 1 }] })],
      ['results.0.firstFailureRun', (f) => (r0(f).firstFailureRun = 0)],
      ['results.0.firstFailureRun', (f) => (r0(f).firstFailureRun = 1.5)],
      ['results.0.firstFailureMs', (f) => (r0(f).firstFailureMs = -1)],
      ['results.0.error', (f) => (r0(f).error = 5)],
      ['results.0.counterexample.violations', (f) => (r0(f).counterexample = { size: {}, notMinimal: [] })],
      ['results.0.counterexample.violations.0.invariant', (f) => (r0(f).counterexample = { size: {}, violations: [{}], notMinimal: [] })],
      ['results.0.counterexample.notMinimal', (f) => (r0(f).counterexample = { size: {}, violations: [] })],
      ['results.0.counterexample.size', (f) => (r0(f).counterexample = { violations: [], notMinimal: [] })],
      ['results', (f) => (f.results = {})],
    ];
    for (const [path, edit] of cases) expect(bad(edit), path).toMatch(new RegExp(`^x\\.json: not a retrysim\\.shard/1 file: at ${path.replace(/\./g, '\\.')}: `));
    // The shard's index below its count, named.
    expect(bad((f) => (f.shard = { index: 2, count: 2 }))).toBe('x.json: not a retrysim.shard/1 file: at shard.index: shard.index must be below shard.count');
  });

  it('optional and open fields: a shard file may carry what a result carries', () => {
    expect(bad((f) => { r0(f).complete = true; r0(f).firstFailureMs = 0; r0(f).error = 'e'; r0(f).shortfall = { done: 1 }; r0(f).counterexample = { size: { operations: 1 }, violations: [{ invariant: 'x', op: 'op1' }], notMinimal: [], scenario: {} }; r0(f).bounded = { schedules: 0, complete: false, scenarios: 2 }; })).toBe('accepted');
    expect(bad((f) => { f.untilBudget = true; f.timeBudgetMs = 10; f.wallMs = 0; f.seed = -5; })).toBe('accepted');
    // Every verdict word and exploration mode a shard can carry.
    for (const verdict of ['holds', 'fails', 'inconclusive']) expect(bad((f) => (r0(f).verdict = verdict)), verdict).toBe('accepted');
    expect(bad((f) => (f.explore = 'pct'))).toBe('accepted');
  });
});
