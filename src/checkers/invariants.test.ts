import { describe, expect, test } from 'vitest';
import { openStore, type Store } from '../tracker/store.js';
import type { AttemptRecord, HarnessResult } from '../harness/client.js';
import type { OperationEnd } from './invariants.js';
import { checkServiceInvariants } from '../service/check.js';
import { trackerService } from '../tracker/service.js';

/** The tracker's invariants, judged as every run is: through its service definition's effects. */
const checkInvariants = (s: Store, ops: readonly OperationEnd[]) => checkServiceInvariants(trackerService({ variant: 'key_atomic' }), s.db, ops);

/**
 * The checkers judged on hand-built end states, one branch at a time, with
 * the sentence each violation prints (it is what `retrysim check` and
 * `replay` show a user). The property suites judge real runs; these pin
 * each rule, including what must *not* be reported.
 */

const report = (s: Store, runId: string, tenant = 'default'): number => s.insertReport({ run_id: runId, module: 'm', title: 't', steps: 's' }, null, 0, tenant);

const attempt = (over: Partial<AttemptRecord> = {}): AttemptRecord => ({
  toolUseId: 'toolu_r1_1',
  attempt: 1,
  key: 'r1:toolu_r1_1',
  title: 't',
  startMs: 0,
  endMs: 1,
  outcome: { kind: 'http', status: 201 },
  replay: false,
  ...over,
});

const success = (reportId: number): HarnessResult => ({ kind: 'success', reportId, replay: false, attempts: 1 });
const unknown: HarnessResult = { kind: 'unknown', error: 'outcome unknown', attempts: 4 };

const op = (over: Partial<OperationEnd> = {}): OperationEnd => ({ id: 'op1', runId: 'r1', tenant: 'default', keySource: 'tool_call', attempts: [], results: [], ...over });

describe('checkInvariants', () => {
  test('exactly-one: two reports are a violation, with their ids; the count is reported per operation', () => {
    const s = openStore();
    const a = report(s, 'r1');
    const b = report(s, 'r1');
    report(s, 'r2');
    const v = checkInvariants(s, [op({ results: [success(a)] }), op({ id: 'op2', runId: 'r2' })]);
    expect(v.reports).toEqual({ op1: 2, op2: 1 });
    expect(v.violations).toEqual([{ invariant: 'exactly-one', op: 'op1', detail: `2 reports (ids ${a}, ${b}) for one logical operation` }]);
  });

  test('exactly-one: zero reports is a violation only once a client saw success', () => {
    const s = openStore();
    expect(checkInvariants(s, [op({ results: [unknown] })]).violations).toEqual([]);
    expect(checkInvariants(s, [op({ results: [unknown, success(7)] })]).violations).toContainEqual({
      invariant: 'exactly-one',
      op: 'op1',
      detail: 'the client was told it succeeded, but no report exists',
    });
  });

  test('one report and a success: nothing to report', () => {
    const s = openStore();
    const id = report(s, 'r1');
    expect(checkInvariants(s, [op({ attempts: [attempt({ reportId: id })], results: [success(id)] })])).toEqual({ reports: { op1: 1 }, violations: [] });
  });

  test('id-exists: an id handed out that no report has', () => {
    const s = openStore();
    const id = report(s, 'r1');
    const v = checkInvariants(s, [op({ attempts: [attempt({ reportId: id }), attempt({ attempt: 2, reportId: 99 })] })]);
    expect(v.violations).toEqual([{ invariant: 'id-exists', op: 'op1', detail: 'attempt toolu_r1_1#2 was given report id 99, which does not exist' }]);
  });

  test("id-exists: an id of the same tenant's other run", () => {
    const s = openStore();
    report(s, 'r1');
    const other = report(s, 'r2');
    const v = checkInvariants(s, [op({ attempts: [attempt({ reportId: other })] })]);
    expect(v.violations).toEqual([{ invariant: 'id-exists', op: 'op1', detail: `report ${other} belongs to run 'r2', not 'r1'` }]);
  });

  test("tenant-isolation: an id of another tenant's report, even for the same run id", () => {
    const s = openStore();
    const theirs = report(s, 'r1', 'acme');
    const v = checkInvariants(s, [op({ attempts: [attempt({ reportId: theirs })] })]);
    expect(v.violations).toEqual([{ invariant: 'tenant-isolation', op: 'op1', detail: `tenant 'default' received report ${theirs} of tenant 'acme'` }]);
  });

  test("told it succeeded with another tenant's report and none of its own: exactly-one says whose it was handed (it read 'no report exists', though one did)", () => {
    const s = openStore();
    const theirs = report(s, 'r1', 'acme');
    const success = { kind: 'success' } as unknown as HarnessResult;
    const v = checkInvariants(s, [op({ attempts: [attempt({ reportId: theirs })], results: [success] })]);
    expect(v.violations).toEqual([
      { invariant: 'exactly-one', op: 'op1', detail: `the client was told it succeeded, but no report of its own exists (it was handed report ${theirs}, another operation's)` },
      { invariant: 'tenant-isolation', op: 'op1', detail: `tenant 'default' received report ${theirs} of tenant 'acme'` },
    ]);
  });

  test('attempts without a report id are not judged by invariant 2', () => {
    const s = openStore();
    report(s, 'r1');
    expect(checkInvariants(s, [op({ attempts: [attempt({ outcome: { kind: 'transport', reason: 'timeout' } })] })]).violations).toEqual([]);
  });

  test('stable-key: judged per tool call — two keys within one call break it, two calls with two keys do not', () => {
    const s = openStore();
    report(s, 'r1');
    const within = checkInvariants(s, [op({ keySource: 'per_attempt', attempts: [attempt({ key: 'a' }), attempt({ attempt: 2, key: 'b' }), attempt({ attempt: 3, key: 'b' })] })]);
    expect(within.violations).toEqual([{ invariant: 'stable-key', op: 'op1', detail: 'call toolu_r1_1 sent 2 different keys across its attempts' }]);
    const across = checkInvariants(s, [op({ attempts: [attempt({ key: 'a' }), attempt({ toolUseId: 'toolu_r1_2', key: 'b' })] })]);
    expect(across.violations).toEqual([]);
  });

  test('stable-key is not judged for key source none (its attempts carry no key to compare)', () => {
    const s = openStore();
    report(s, 'r1');
    const v = checkInvariants(s, [op({ keySource: 'none', attempts: [attempt({ key: 'x' }), attempt({ attempt: 2, key: undefined })] })]);
    expect(v.violations).toEqual([]);
  });
});
