/**
 * One test per behaviour of the tracker issue, each fix shown next to a
 * known-bad variant going red under the same faults.
 */
import { describe, expect, it } from 'vitest';
import { parseScenario } from './load.js';
import { runScenario } from './run.js';
import { canonicalScenario } from './canonical.js';
import { openStore, storeOn, type KeyRow } from '../tracker/store.js';
import { TrackerInstance } from '../tracker/instance.js';
import { submitReport, type AttemptRecord } from '../harness/client.js';
import type { Transport } from '../harness/transport.js';
import { Prng } from '../random/prng.js';
import { checkServiceInvariants } from '../service/check.js';
import { trackerService } from '../tracker/service.js';
import type { StepEnv } from '../tracker/env.js';

function scenario(over: Record<string, unknown>) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2',
    name: 'behaviour',
    seed: 3,
    service: { variant: 'key_atomic' },
    client: { keySource: 'tool_call' },
    operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails' }],
    expect: {},
    ...over,
  }));
}

const row = (variant: string, keySource: string) => ({ variant, keySource }) as Parameters<typeof canonicalScenario>[1];

describe('lost response after commit', () => {
  it('a stable key replays the first result: same report_id, replay flag, same key on both attempts', async () => {
    const r = await runScenario(canonicalScenario('lost_response', row('key_atomic', 'tool_call')));
    const [first, second] = r.operations[0]!.attempts;
    expect(first!.outcome).toEqual({ kind: 'transport', reason: 'connection_closed' });
    expect(second!.outcome).toEqual({ kind: 'http', status: 201 });
    expect(second!.replay).toBe(true);
    expect(second!.key).toBe(first!.key);
    expect(r.reports.op1).toBe(1);
    expect(r.violations).toEqual([]);
  });

  it('naive holds 2 reports under the same fault (canary)', async () => {
    const r = await runScenario(canonicalScenario('lost_response', row('naive', 'none')));
    expect(r.reports.op1).toBe(2);
    expect(r.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
  });
});

describe('crash between key_split\'s two commits', () => {
  it('key_split holds 2 reports, key_atomic 1', async () => {
    expect((await runScenario(canonicalScenario('crash_mid_request', row('key_split', 'tool_call')))).reports.op1).toBe(2);
    expect((await runScenario(canonicalScenario('crash_mid_request', row('key_atomic', 'tool_call')))).reports.op1).toBe(1);
  });
});

describe('same-key concurrency', () => {
  it('key_atomic: 1 report, at least one 409 seen, both workers end with the same report_id', async () => {
    const r = await runScenario(canonicalScenario('concurrent_duplicate', row('key_atomic', 'tool_call')));
    const op = r.operations[0]!;
    expect(r.reports.op1).toBe(1);
    expect(op.attempts.some((a) => a.outcome.kind === 'http' && a.outcome.status === 409)).toBe(true);
    expect(op.results).toHaveLength(2);
    const ids = op.results.map((x) => (x.kind === 'success' ? x.reportId : undefined));
    expect(ids[0]).toBeDefined();
    expect(ids[1]).toBe(ids[0]);
  });

  it('key_split holds 2 reports under the same race (canary)', async () => {
    expect((await runScenario(canonicalScenario('concurrent_duplicate', row('key_split', 'tool_call')))).reports.op1).toBe(2);
  });
});

describe('validation through the harness', () => {
  const store = openStore(':memory:');
  const inst = new TrackerInstance({ variant: 'key_atomic', db: store });
  const env: StepEnv = {
    now: () => 0,
    step: async () => {},
    sleep: async () => {},
    defer: () => { throw new Error('unused'); },
  };
  const direct: Transport = {
    async send(req) {
      const res = await inst.handle(req, env);
      return { kind: 'response', status: res.status, headers: res.headers, body: res.body };
    },
  };
  const clientEnv = { now: () => 0, sleep: async () => {}, rng: new Prng(1) };

  it('same key with a different body → 422, not retried', async () => {
    const log: AttemptRecord[] = [];
    const a = await submitReport({ runId: 'r', module: 'm', title: 'T', steps: 'one' }, 'toolu_1', direct, clientEnv, { keySource: 'business' }, log);
    expect(a.kind).toBe('success');
    const b = await submitReport({ runId: 'r', module: 'm', title: 'T', steps: 'two' }, 'toolu_2', direct, clientEnv, { keySource: 'business' }, log);
    expect(b).toMatchObject({ kind: 'failed', status: 422, attempts: 1 });
    expect(store.countReports()).toBe(1);
  });

  it('a missing field → 400, not retried, nothing written', async () => {
    const before = store.countReports();
    const log: AttemptRecord[] = [];
    const r = await submitReport({ runId: '', module: 'm', title: 'T', steps: '' }, 'toolu_3', direct, clientEnv, { keySource: 'tool_call' }, log);
    expect(r).toMatchObject({ kind: 'failed', status: 400, attempts: 1 });
    expect(log).toHaveLength(1);
    expect(store.countReports()).toBe(before);
  });
});

describe('a stale placeholder left by a killed process', () => {
  it('answers 409 within the lease and is taken over after it, fence 1 → 2', async () => {
    const s = scenario({
      faults: { kill: { atStep: 'process', restartAfterMs: 100 } },
      // w1 arrives within the lease (409s), w2 after it (take-over).
      operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers: 3, staggerMs: 2700 }],
      client: { keySource: 'tool_call', maxAttempts: 2 },
    });
    let keys: KeyRow[] = [];
    const r = await runScenario(s, { inspect: (db) => (keys = storeOn(db).keyRows()) });
    const op = r.operations[0]!;
    const w1 = op.attempts.filter((a) => a.startMs >= 2700 && a.startMs < 5000);
    expect(w1.length).toBeGreaterThan(0);
    expect(w1.every((a) => a.outcome.kind === 'http' && a.outcome.status === 409)).toBe(true);
    expect(r.reports.op1).toBe(1);
    expect(keys[0]).toMatchObject({ status: 'done', fence: 2 });
  });
});

describe('slow request taken over (lease 0.5 s, processing 0.8 s)', () => {
  it('fencing off → 2 reports', async () => {
    expect((await runScenario(canonicalScenario('slow_takeover', row('key_atomic_nofence', 'tool_call')))).reports.op1).toBe(2);
  });
  it('fencing on → 1 report, and both workers get the same report_id', async () => {
    const r = await runScenario(canonicalScenario('slow_takeover', row('key_atomic', 'tool_call')));
    expect(r.reports.op1).toBe(1);
    const ids = r.operations[0]!.results.map((x) => (x.kind === 'success' ? x.reportId : -1));
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBeGreaterThan(0);
    expect(ids[1]).toBe(ids[0]);
  });
});

describe('lease configuration', () => {
  it('a lease shorter than the client timeout is refused with a clear message', () => {
    expect(() => new TrackerInstance({ variant: 'key_atomic', db: openStore(), leaseMs: 1500, clientTimeoutMs: 2000 }))
      .toThrow(/lease 1500 ms must exceed client timeout 2000 ms/);
  });
});

describe('memory_singleflight', () => {
  it('one report for concurrent same-key requests in one process', async () => {
    expect((await runScenario(canonicalScenario('concurrent_duplicate', row('memory_singleflight', 'tool_call')))).reports.op1).toBe(1);
  });
  it('duplicates after a restart: the completed map is lost', async () => {
    const r = await runScenario(scenario({
      service: { variant: 'memory_singleflight' },
      faults: { loseResponseAfterCommit: 1, kill: { atMs: 2.5, restartAfterMs: 10 } },
      client: { keySource: 'tool_call', maxAttempts: 6 },
    }));
    expect(r.reports.op1).toBe(2);
  });
  it('duplicates across two instances: each has its own maps', async () => {
    const r = await runScenario(scenario({
      service: { variant: 'memory_singleflight', instances: 2 },
      faults: { loseResponseAfterCommit: 1 },
    }));
    expect(r.reports.op1).toBe(2);
  });
  it('key_atomic holds 1 across the same restart and two instances (the fix)', async () => {
    expect((await runScenario(scenario({ faults: { loseResponseAfterCommit: 1, kill: { atMs: 2.5, restartAfterMs: 10 } }, client: { keySource: 'tool_call', maxAttempts: 6 } }))).reports.op1).toBe(1);
    expect((await runScenario(scenario({ service: { variant: 'key_atomic', instances: 2 }, faults: { loseResponseAfterCommit: 1 } }))).reports.op1).toBe(1);
  });
});

describe('a report_id returned to the client always exists', () => {
  it('the checker catches a server that hands out an id it never stored', () => {
    const store = openStore(':memory:');
    const attempt: AttemptRecord = { toolUseId: 't', attempt: 1, key: 'k', title: 'x', startMs: 0, endMs: 1, outcome: { kind: 'http', status: 201 }, replay: false, reportId: 999 };
    const v = checkServiceInvariants(trackerService({ variant: 'key_atomic' }), store.db, [{ id: 'op1', runId: 'r1', tenant: 'default', keySource: 'tool_call', attempts: [attempt], results: [{ kind: 'success', reportId: 999, replay: false, attempts: 1 }] }]);
    expect(v.violations.map((x) => x.invariant).sort()).toEqual(['exactly-one', 'id-exists']);
  });
  it('and finds no such problem in real runs of every canonical cell of key_atomic/tool_call', async () => {
    for (const col of ['lost_response', 'crash_mid_request', 'concurrent_duplicate', 'slow_takeover'] as const) {
      const r = await runScenario(canonicalScenario(col, row('key_atomic', 'tool_call')));
      expect(r.violations.filter((v) => v.invariant === 'id-exists')).toEqual([]);
    }
  });
});
