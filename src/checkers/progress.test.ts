import { describe, expect, test } from 'vitest';
import { openStore, type Store } from '../tracker/store.js';
import type { HarnessResult } from '../harness/client.js';
import type { OperationEnd } from './invariants.js';
import { checkProgress as checkProgressBy, type ProgressContext, type RecoveryOutcome } from './progress.js';
import { effectsOf } from '../service/check.js';
import { trackerService } from '../tracker/service.js';

/** progress as every run judges it: the operation's reports through the tracker's service definition. */
const checkProgress = (s: Store, ...rest: Parameters<typeof checkProgressBy> extends [unknown, ...infer R] ? R : never) =>
  checkProgressBy((o) => effectsOf(trackerService({ variant: 'key_atomic' }), s.db, o), ...rest);

/**
 * `progress` (SPEC §5 invariant 5) on hand-built recovery outcomes: which
 * endings count as progress, the two excuses (a deliberately reused key
 * refused; a lease that breaks SPEC §3's rule) and their exact boundaries,
 * and the sentence each violation prints.
 */

const report = (s: Store, runId: string): number => s.insertReport({ run_id: runId, module: 'm', title: 't', steps: 's' }, null, 0);
const unknown: HarnessResult = { kind: 'unknown', error: 'outcome unknown', attempts: 4 };
const op = (over: Partial<OperationEnd> = {}): OperationEnd => ({ id: 'op1', runId: 'r1', tenant: 'default', keySource: 'tool_call', attempts: [], results: [unknown], ...over });
/** A safe deployment: lease 5000 > timeout 2000 + processing 100 + skew 0. */
const safe: ProgressContext = { usesLease: true, leaseMs: 5000, clientTimeoutMs: 2000, slowMs: 100, skewMs: 0 };
const rec = (o: Partial<RecoveryOutcome>): Map<string, RecoveryOutcome> => new Map([['op1', { kind: 'gave_up', attempts: 3, fromMs: 5101.4, last: 'HTTP 409', status: 409, ...o }]]);

describe('checkProgress', () => {
  test('a success seen in the main run is progress, whatever the recovery says', () => {
    const s = openStore();
    expect(checkProgress(s, [op({ results: [unknown, { kind: 'success', reportId: 1, replay: false, attempts: 1 }] })], rec({}), safe)).toEqual([]);
  });

  test('no recovery entry, or a report the query found, is progress', () => {
    const s = openStore();
    expect(checkProgress(s, [op()], new Map(), safe)).toEqual([]);
    expect(checkProgress(s, [op()], rec({ kind: 'found', attempts: 0 }), safe)).toEqual([]);
  });

  test('a resubmission that succeeded needs exactly one report', () => {
    const s = openStore();
    expect(checkProgress(s, [op()], rec({ kind: 'success' }), safe)).toEqual([
      { invariant: 'progress', op: 'op1', detail: 'the resubmission after the faults stopped succeeded, but the operation now has 0 reports' },
    ]);
    // The answer it was given is named: a 201 that made no effect of this operation is another's stored answer.
    expect(checkProgress(s, [op()], rec({ kind: 'success', last: 'HTTP 201', body: '{"id":7}' }), safe)[0]!.detail)
      .toBe('the resubmission after the faults stopped succeeded (HTTP 201 {"id":7}), but the operation now has 0 reports');
    report(s, 'r1');
    expect(checkProgress(s, [op()], rec({ kind: 'success' }), safe)).toEqual([]);
    report(s, 'r1');
    expect(checkProgress(s, [op()], rec({ kind: 'success' }), safe)[0]!.detail).toMatch(/now has 2 reports$/);
  });

  test('giving up and being refused are violations, each saying how', () => {
    const s = openStore();
    expect(checkProgress(s, [op()], rec({}), safe)).toEqual([
      {
        invariant: 'progress',
        op: 'op1',
        detail: 'no report acknowledged after the faults stopped and every lease expired (from t=5101 ms): 3 resubmission(s) got no success, the last HTTP 409; no report exists',
      },
    ]);
    expect(checkProgress(s, [op()], rec({ kind: 'refused', last: 'HTTP 422 fingerprint mismatch' }), safe)[0]!.detail).toMatch(
      /: the resubmission was refused \(HTTP 422 fingerprint mismatch\); no report exists$/,
    );
  });

  test('a service with no lease (progress.leased: false) is not told its leases expired', () => {
    const s = openStore();
    expect(checkProgress(s, [op()], rec({}), { ...safe, usesLease: false })[0]!.detail).toBe(
      'no report acknowledged after the faults stopped (from t=5101 ms): 3 resubmission(s) got no success, the last HTTP 409; no report exists',
    );
  });

  test('the message says what the resubmissions did and what exists now: timeouts with their length, reports they made without hearing so', () => {
    const s = openStore();
    report(s, 'r1');
    expect(checkProgress(s, [op()], rec({ attempts: 3, last: 'timeout', timeoutMs: 2000 }), safe)[0]!.detail).toBe(
      'no report acknowledged after the faults stopped and every lease expired (from t=5101 ms): 3 resubmission(s) got no success, the last timed out after 2000 ms; 1 report exists',
    );
    report(s, 'r1');
    expect(checkProgress(s, [op()], rec({ last: 'timeout', timeoutMs: 2000 }), safe)[0]!.detail).toMatch(/; 2 reports exist$/);
  });

  test('a reused key excuses a refusal only — not giving up', () => {
    const s = openStore();
    expect(checkProgress(s, [op({ reusesKey: true })], rec({ kind: 'refused', last: 'HTTP 422' }), safe)).toEqual([]);
    expect(checkProgress(s, [op({ reusesKey: true })], rec({}), safe)).toHaveLength(1);
    expect(checkProgress(s, [op({ reusesKey: false })], rec({ kind: 'refused', last: 'HTTP 422' }), safe)).toHaveLength(1);
  });

  test('an unsafe lease (≤ timeout + processing + skew) excuses the service; one ms more does not', () => {
    const s = openStore();
    const at = (leaseMs: number, skewMs = 0, usesLease = true) => checkProgress(s, [op()], rec({}), { usesLease, leaseMs, clientTimeoutMs: 2000, slowMs: 100, skewMs });
    expect(at(2100)).toEqual([]);
    expect(at(2101)).toHaveLength(1);
    expect(at(2150, 50)).toEqual([]);
    expect(at(2151, 50)).toHaveLength(1);
    // Without a lease there is nothing to take over: no excuse.
    expect(at(2100, 0, false)).toHaveLength(1);
  });

  test('each operation is judged on its own', () => {
    const s = openStore();
    const outcomes = new Map<string, RecoveryOutcome>([
      ['op1', { kind: 'found', attempts: 0, fromMs: 0 }],
      ['op2', { kind: 'gave_up', attempts: 1, fromMs: 0, last: 'timeout' }],
    ]);
    expect(checkProgress(s, [op(), op({ id: 'op2', runId: 'r2' })], outcomes, safe).map((v) => v.op)).toEqual(['op2']);
  });
});
