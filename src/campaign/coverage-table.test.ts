/**
 * The coverage table as unit tests: which situations a fault space lists,
 * in which order and words, and how counts become rows, merge and print.
 * coverage.test.ts shows it on real campaigns (a service's unreachable
 * situation listed as never reached, the built-in claims reaching all).
 */
import { describe, expect, it } from 'vitest';
import type { FaultKind } from '../scenario/arbitraries.js';
import { Reached } from '../service/reached.js';
import { addCounts, countRun, coverageOf, coverageText, mergeCoverage, neverReached, situationsOf, type CoverageCounts, type FaultSpace } from './coverage.js';

const def: FaultSpace['def'] = { steps: ['check', 'write', 'reply'], crashPoints: ['after-write'], situations: ['ttl-expired'], slowStep: 'write', progress: {} as never };
const ALL: FaultKind[] = ['loseResponse', 'loseAllAnswers', 'crash', 'slow', 'pause', 'kill', 'clockOffset', 'instances'];
const ids = (f: FaultSpace) => situationsOf(f).map((s) => s.id);

describe('situationsOf: what a fault space and a service can reach', () => {
  it('every fault kind at each place it can strike, overlaps, replay, preemptions, declared situations, recovery and spans, in that order and in the service\'s words', () => {
    expect(situationsOf({ def, faults: ALL, keySource: 'tool_call' })).toEqual([
      { id: 'lose-after-commit', what: 'an answer lost after its commit' },
      { id: 'answer-lost', what: 'an answer lost on the way back' },
      { id: 'crash@after-write', what: 'a crash at after-write' },
      { id: 'slow@write', what: 'slow processing after write' },
      { id: 'pause@check', what: 'a pause at check' },
      { id: 'pause@write', what: 'a pause at write' },
      { id: 'pause@reply', what: 'a pause at reply' },
      { id: 'kill@check', what: 'a kill at check' },
      { id: 'kill@write', what: 'a kill at write' },
      { id: 'kill@reply', what: 'a kill at reply' },
      { id: 'clock-offset', what: 'instances with skewed clocks' },
      { id: 'instance:second', what: 'a request served by a second instance' },
      { id: 'overlap:2', what: '2 same-key requests inside the service at once' },
      { id: 'overlap:3', what: '3 same-key requests inside the service at once' },
      { id: 'replay', what: 'a stored answer replayed' },
      { id: 'preempt@check', what: 'a preemption before check' },
      { id: 'preempt@write', what: 'a preemption between check and write' },
      { id: 'preempt@reply', what: 'a preemption between write and reply' },
      { id: 'service:ttl-expired', what: 'ttl-expired (declared by the service)' },
      { id: 'recovery:found', what: 'recovery: the query found the effect' },
      { id: 'recovery:resubmitted', what: 'recovery: a resubmission after the faults stopped' },
      { id: 'span:1s', what: 'a run of ≤ 1 s (virtual)' },
      { id: 'span:1min', what: 'a run of 1 s – 1 min (virtual)' },
      { id: 'span:1h', what: 'a run of 1 min – 1 h (virtual)' },
    ]);
  });

  it('no fault: only what any run can reach (preemptions, the service\'s own, recovery, spans); no key: no overlap or replay', () => {
    expect(ids({ def, faults: [], keySource: 'none' })).toEqual(['preempt@check', 'preempt@write', 'preempt@reply', 'service:ttl-expired', 'recovery:found', 'recovery:resubmitted', 'span:1s', 'span:1min', 'span:1h']);
    expect(ids({ def, faults: [], keySource: 'per_attempt' })).not.toContain('overlap:2');
    expect(ids({ def, faults: [], keySource: 'business' })).toContain('replay');
    // No progress query, no declared situations, no crash points: none of theirs — but the recovery phase it lacks is a row no run reaches.
    const bare = { steps: ['s'] };
    expect(ids({ def: bare, faults: ['crash'], keySource: 'none' })).toEqual(['preempt@s', 'recovery:not-declared', 'span:1s', 'span:1min', 'span:1h']);
  });

  it('the fault kinds that imply another\'s situations: a lease race is slow processing, a crash after a take-over is a crash', () => {
    expect(ids({ def, faults: ['leaseRace'], keySource: 'none' })).toContain('slow@write');
    expect(ids({ def, faults: ['crashTakeover'], keySource: 'none' })).toContain('crash@after-write');
    for (const k of ALL) expect(ids({ def, faults: ALL.filter((x) => x !== k), keySource: 'none' }).length, k).toBeLessThan(ids({ def, faults: ALL, keySource: 'none' }).length);
  });

  it('slow processing at the built-in\'s slow step, the first step without one, every step for a user\'s service', () => {
    expect(ids({ def: { ...def, slowStep: undefined }, faults: ['slow'], keySource: 'none' }).filter((x) => x.startsWith('slow@'))).toEqual(['slow@check']);
    expect(ids({ def, faults: ['slow'], keySource: 'none', slowAtAnyStep: true }).filter((x) => x.startsWith('slow@'))).toEqual(['slow@check', 'slow@write', 'slow@reply']);
  });
});

describe('counting, the table and its merge', () => {
  it('a run counts each situation it reached once; counts add up', () => {
    const counts: CoverageCounts = {};
    const r = new Reached();
    r.add('replay');
    r.add('replay');
    r.add('span:1s');
    countRun(counts, r);
    countRun(counts, r);
    expect(counts).toEqual({ replay: 2, 'span:1s': 2 });
    expect(addCounts({ a: 1 }, { a: 2, b: 3 })).toEqual({ a: 3, b: 3 });
    const a = { a: 1 };
    expect(addCounts(a, undefined)).toBe(a);
    expect(a).toEqual({ a: 1 });
  });

  it('the table: the fault space\'s situations in order, 0 where never reached, then anything else reached, sorted and worded', () => {
    const sits = [{ id: 'replay', what: 'a stored answer replayed' }, { id: 'overlap:2', what: 'two at once' }];
    const t = coverageOf(sits, { 'overlap:2': 4, 'pause@time': 1, 'kill@time': 2, zeta: 3 }, 10);
    expect(t).toEqual({
      runs: 10,
      rows: [
        { id: 'replay', what: 'a stored answer replayed', runs: 0 },
        { id: 'overlap:2', what: 'two at once', runs: 4 },
        { id: 'kill@time', what: 'a kill at a planned time', runs: 2 },
        { id: 'pause@time', what: 'pause at time', runs: 1 },
        { id: 'zeta', what: 'zeta', runs: 3 },
      ],
    });
    expect(neverReached(t)).toEqual([{ id: 'replay', what: 'a stored answer replayed', runs: 0 }]);
  });

  it('two tables of one claim add up, rows of either in first-seen order', () => {
    const a = { runs: 3, rows: [{ id: 'x', what: 'X', runs: 1 }, { id: 'y', what: 'Y', runs: 0 }] };
    const b = { runs: 5, rows: [{ id: 'y', what: 'Y', runs: 2 }, { id: 'z', what: 'Z', runs: 5 }] };
    expect(mergeCoverage(a, b)).toEqual({ runs: 8, rows: [{ id: 'x', what: 'X', runs: 1 }, { id: 'y', what: 'Y', runs: 2 }, { id: 'z', what: 'Z', runs: 5 }] });
    expect(mergeCoverage(undefined, b)).toBe(b);
    expect(mergeCoverage(a, undefined)).toBe(a);
    expect(mergeCoverage(undefined, undefined)).toBeUndefined();
  });

  it('two tables that each leave out rows of one order (a hosted app\'s commands a shard never sent) merge into that order, not with the missing rows at the end', () => {
    const row = (id: string) => ({ id, what: id, runs: 1 });
    const ids = (a: string[], b: string[]) => mergeCoverage({ runs: 1, rows: a.map(row) }, { runs: 1, rows: b.map(row) })!.rows.map((r) => r.id);
    expect(ids(['a', 'c', 'e'], ['a', 'b', 'c', 'd', 'e', 'f'])).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(ids(['b', 'd'], ['a', 'd', 'e'])).toEqual(['a', 'b', 'd', 'e']);
  });

  it('printed side by side: one column per campaign, · outside its fault space, 0 ✗ where never reached', () => {
    const text = coverageText([
      { name: 'A', coverage: { runs: 10, rows: [{ id: 'x', what: 'thing X', runs: 4 }, { id: 'y', what: 'thing Y', runs: 0 }] } },
      { name: 'B', coverage: { runs: 7, rows: [{ id: 'y', what: 'thing Y (B)', runs: 7 }, { id: 'z', what: 'thing Z', runs: 1 }] } },
    ]);
    const lines = text.split('\n').map((l) => l.split('│').map((c) => c.trim()).filter((c) => c !== ''));
    const body = lines.filter((l) => l.length === 3);
    expect(body).toEqual([
      ['situation', 'A (of 10)', 'B (of 7)'],
      ['thing X', '4', '·'],
      ['thing Y', '0 ✗', '7'],
      ['thing Z', '·', '1'],
    ]);
  });
});
