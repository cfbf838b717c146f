import { describe, expect, it } from 'vitest';
import { loadScenario, parseScenario } from './load.js';
import { runScenario, type ScenarioRun } from './run.js';
import { clockSkewMs, recoverOperation, recoveryTimeoutMs, runRecovery } from './recovery.js';
import { Prng } from '../random/prng.js';
import type { TrackerRequest } from '../tracker/messages.js';
import authed from '../service/fixtures/authed-orders.js';
import type { ServiceDefinition, ServiceSim } from '../service/definition.js';
import { releaseDatabase, simDatabase } from '../service/db.js';
import { hostInstances } from '../service/run.js';
import { ServiceError } from '../service/errors.js';
import type { OperationEnd } from '../checkers/invariants.js';
import type { Scenario } from './schema.js';

/**
 * The recovery phase of SPEC §5 invariant 5 (`progress`), on small services
 * written here that log every request they are sent: when the phase starts
 * (only once every lease has expired), the per-request timeout it uses, its
 * virtual-time budget and attempt cap, the last question it asks before
 * giving up, and what each ending records.
 */

interface Seen {
  method: string;
  path: string;
  /** Virtual time the request reached the service (sent + 1 ms of latency here). */
  atMs: number;
  tenant: string | undefined;
  body: string;
}

/** What the probe does with a POST: `n` counts POSTs from 1 over the whole run (main run and recovery). */
type PostRule = (n: number, sim: ServiceSim) => Promise<{ status: number; effect: boolean }>;

/**
 * A service that answers POST /orders by `rule`, records an order when the
 * rule says so (one per order ref at most), answers GET /orders?ref= with
 * the orders it has, and logs every request.
 */
function probe(name: string, progress: { settleMs: number; leased: boolean }, rule: PostRule): ServiceDefinition & { seen: Seen[] } {
  const seen: Seen[] = [];
  let posts = 0;
  return {
    name,
    seen,
    tables: ['orders'],
    setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT NOT NULL, tenant TEXT NOT NULL)'),
    steps: ['work'],
    operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId, title: op.title }) },
    effects: {
      noun: 'order',
      of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[],
    },
    progress: {
      ...progress,
      query: (op) => ({ path: `/orders?ref=${op.runId}` }),
      found: (status, body) => status === 200 && (JSON.parse(body) as number[]).length > 0,
    },
    async handle(req, sim) {
      const tenant = req.headers['x-tenant'] ?? 'default';
      seen.push({ method: req.method, path: req.path, atMs: sim.now(), tenant: req.headers['x-tenant'], body: req.body });
      if (req.method === 'GET') {
        const ref = req.path.slice('/orders?ref='.length);
        return { status: 200, body: JSON.stringify(sim.db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ?').pluck().all(ref, tenant)) };
      }
      const { ref } = JSON.parse(req.body) as { ref: string };
      await sim.step('work');
      const { status, effect } = await rule(++posts, sim);
      let id = sim.db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ?').pluck().get(ref, tenant) as number | undefined;
      if (effect && id === undefined) id = Number(sim.db.prepare('INSERT INTO orders (ref, tenant) VALUES (?, ?)').run(ref, tenant).lastInsertRowid);
      return { status, body: JSON.stringify(id === undefined ? { error: 'no' } : { id }) };
    },
  };
}

/** The first POST is refused with 503 (the harness has one attempt: the order ends "outcome unknown"); later ones by `then`. */
const failFirst = (then: PostRule): PostRule => async (n, sim) => (n === 1 ? { status: 503, effect: false } : then(n, sim));
const ok: PostRule = async () => ({ status: 201, effect: true });

/** One order, one attempt in the main run, 1 ms latency each way, a 2 s client timeout unless `extra` says otherwise. */
function scenario(extra: Record<string, unknown> = {}): Scenario {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'recovery probe', seed: 3,
    service: { module: 'probe' },
    client: { keySource: 'tool_call', maxAttempts: 1 },
    operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
    expect: {},
    ...extra,
  }));
}

/** The requests the probe saw after the main run ended. */
const recoverySeen = (def: { seen: Seen[] }, run: ScenarioRun) => def.seen.filter((x) => x.atMs > run.result.timeMs);

describe('when the recovery phase starts: once every lease has expired', () => {
  it('at main end + progress.settleMs + the clocks\' largest skew + 1 ms: the outcome says so, and the service hears nothing before', async () => {
    const def = probe('probe', { settleMs: 700, leased: true }, failFirst(ok));
    const s = scenario({ service: { module: 'probe', instances: 2, clockOffsetMs: [0, 0] } });
    const run = await runScenario(s, { service: def });
    const end = run.result.timeMs;
    expect(end).toBeGreaterThan(0);
    const startMs = end + 700 + 0 + 1;
    expect(run.recovery.get('op1')).toEqual({ kind: 'success', attempts: 1, fromMs: startMs, timeoutMs: 2000, last: 'HTTP 201', headers: expect.any(Object), body: '{"id":1}' });
    // The query, then the resubmission; nothing in the lease window.
    const after = recoverySeen(def, run);
    expect(after.map((x) => x.method)).toEqual(['GET', 'POST']);
    expect(after[0]!.atMs).toBe(startMs + 1);
    // The default tenant sends no x-tenant header; the query has no body, the resubmission is the last request verbatim.
    expect(after.map((x) => x.tenant)).toEqual([undefined, undefined]);
    expect(after.map((x) => x.body)).toEqual(['', JSON.stringify({ ref: 'order-1', title: 'Pay order 1' })]);
    expect(run.violations).toEqual([]);
  });

  it('the phase\'s network has the scenario\'s latency (without the faults)', async () => {
    const def = probe('probe', { settleMs: 700, leased: true }, failFirst(ok));
    const run = await runScenario(scenario({ network: { latencyMeanMs: 7, latencySdMs: 0 } }), { service: def });
    expect(recoverySeen(def, run)[0]!.atMs).toBe(run.recovery.get('op1')!.fromMs + 7);
  });

  it('the skew of the clocks is waited out too: a second instance 250 ms ahead moves the start by 250 ms', async () => {
    const def = probe('probe', { settleMs: 700, leased: true }, failFirst(ok));
    const run = await runScenario(scenario({ service: { module: 'probe', instances: 2, clockOffsetMs: [0, 250] } }), { service: def });
    expect(run.recovery.get('op1')!.fromMs).toBe(run.result.timeMs + 700 + 250 + 1);
  });

  it('why it matters: a correct leased service that a crash left holding a 30 s lease makes progress only because the phase waits the lease out', async () => {
    // The key is claimed with a lease before the work; a crash after the claim
    // leaves the claim behind (no cleanup: the lease is what frees it), and
    // until the lease runs out a resubmission is answered 409 "in progress".
    // That is live: once the lease has expired the next request takes over.
    // A phase that started before the lease expired would meet the
    // live-looking claim: 200 resubmissions answered 409 within ~20 s of
    // backoff, then "gave up" — a progress violation on a service that did
    // nothing wrong (seen with the start's `+ settleMs` removed).
    const leaseMs = 30_000;
    const leased: ServiceDefinition = {
      name: 'leased-orders',
      tables: ['orders', 'claims'],
      setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT NOT NULL); CREATE TABLE claims (key TEXT PRIMARY KEY, locked_at REAL NOT NULL, order_id INTEGER)'),
      steps: ['claim', 'write'],
      crashPoints: ['after-claim'],
      operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }) },
      effects: { noun: 'order', of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ?').pluck().all(op.runId) as number[] },
      progress: { settleMs: leaseMs, leased: true, query: (op) => ({ path: `/orders?ref=${op.runId}` }), found: (st, b) => st === 200 && (JSON.parse(b) as number[]).length > 0 },
      async handle(req, sim) {
        if (req.method === 'GET') return { status: 200, body: JSON.stringify(sim.db.prepare('SELECT id FROM orders WHERE ref = ?').pluck().all(req.path.slice('/orders?ref='.length))) };
        const key = req.headers['idempotency-key']!;
        await sim.step('claim');
        const row = sim.db.prepare('SELECT locked_at, order_id FROM claims WHERE key = ?').get(key) as { locked_at: number; order_id: number | null } | undefined;
        if (row?.order_id != null) return { status: 201, body: JSON.stringify({ id: row.order_id }) };
        if (row !== undefined && sim.now() - row.locked_at < leaseMs) return { status: 409, body: '{"error":"in progress"}' };
        sim.db.prepare('INSERT OR REPLACE INTO claims (key, locked_at, order_id) VALUES (?, ?, NULL)').run(key, sim.now());
        sim.crashPoint('after-claim');
        await sim.step('write');
        const id = Number(sim.db.prepare('INSERT INTO orders (ref) VALUES (?)').run(JSON.parse(req.body).ref).lastInsertRowid);
        sim.db.prepare('UPDATE claims SET order_id = ? WHERE key = ?').run(id, key);
        return { status: 201, body: JSON.stringify({ id }) };
      },
    };
    const run = await runScenario(scenario({ service: { module: 'leased-orders' }, faults: { crashMidRequest: 1 } }), { service: leased });
    // The main run's only attempt crashed after the claim: 500, no order.
    expect(run.operations[0]!.results.map((r) => r.kind)).not.toContain('success');
    expect(run.violations).toEqual([]);
    expect(run.recovery.get('op1')).toEqual({ kind: 'success', attempts: 1, fromMs: run.result.timeMs + leaseMs + 1, timeoutMs: 2000, last: 'HTTP 201', headers: expect.any(Object), body: '{"id":1}' });
    expect(run.reports.op1).toBe(0); // judged on the main run's end state
  });
});

describe('the clocks\' skew and the recovery timeout', () => {
  it('clockSkewMs is the largest disagreement between the instances in use; an instance without an offset reads 0', () => {
    const skew = (service: object) => clockSkewMs(scenario({ service: { module: 'probe', ...service } }));
    expect(skew({})).toBe(0);
    expect(skew({ instances: 2, clockOffsetMs: [0, 250] })).toBe(250);
    expect(skew({ instances: 2, clockOffsetMs: [-100, 150] })).toBe(250);
    expect(skew({ instances: 3, clockOffsetMs: [100, 400] })).toBe(400);
    expect(skew({ instances: 3, clockOffsetMs: [-100, -400] })).toBe(400);
  });

  it('recoveryTimeoutMs: the scenario\'s, raised to a round trip (4 × (mean + 3 sd) + 1); processing added only without a lease', () => {
    const at = (client: object, network: object, faults: object, leased?: boolean) => recoveryTimeoutMs(scenario({ client: { keySource: 'tool_call', ...client }, network, faults }), leased);
    expect(at({ timeoutMs: 2000 }, {}, { slowMs: 500 })).toBe(2000);
    expect(at({ timeoutMs: 2000 }, {}, { slowMs: 500 }, true)).toBe(2000);
    expect(at({ timeoutMs: 2000 }, {}, { slowMs: 500 }, false)).toBe(2000);
    // 4 × (10 + 3 × 5) + 1 = 101
    expect(at({ timeoutMs: 50 }, { latencyMeanMs: 10, latencySdMs: 5 }, {})).toBe(101);
    // Unless told otherwise the service is taken as leased (the progress checker's own call).
    expect(at({ timeoutMs: 50 }, { latencyMeanMs: 10, latencySdMs: 5 }, { slowMs: 900 })).toBe(101);
    expect(at({ timeoutMs: 50 }, { latencyMeanMs: 10, latencySdMs: 5 }, { slowMs: 900 }, false)).toBe(1001);
    expect(at({ timeoutMs: 50 }, { latencyMeanMs: 10, latencySdMs: 5 }, { slowMs: 900 }, true)).toBe(101);
    expect(at({ timeoutMs: 1200 }, { latencyMeanMs: 10, latencySdMs: 5 }, { slowMs: 900 }, false)).toBe(1200);
  });

  it('the phase sends with that timeout: an unleased service\'s slow answer is waited for, a leased one\'s is not', async () => {
    // Every answer takes 300 ms of processing (the slow fault); the client's own timeout is 100 ms.
    // Unleased: max(100, 4 × 1 + 1 + 300) = 305; leased: 100, and the resubmissions time out
    // (the last question finds the order the first of them made).
    for (const [leased, timeoutMs, kind] of [[false, 305, 'success'], [true, 100, 'found']] as const) {
      const def = probe('probe', { settleMs: 400, leased }, failFirst(ok));
      const run = await runScenario(scenario({ client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 100 }, faults: { slowMs: 300 } }), { service: def });
      expect(run.recovery.get('op1')).toMatchObject({ kind, timeoutMs });
    }
  });
});

describe('how the recovery phase ends', () => {
  it('found: the query shows the effect the main run made without hearing so; nothing is resubmitted, and the trace says it in the service\'s words', async () => {
    // The first POST makes the order, then its answer is lost.
    const def = probe('probe', { settleMs: 50, leased: false }, ok);
    const run = await runScenario(scenario({ faults: { loseResponseAfterCommit: 1 } }), { service: def, keepTrace: true });
    const startMs = run.result.timeMs + 51;
    expect(run.recovery.get('op1')).toEqual({ kind: 'found', attempts: 0, fromMs: startMs, timeoutMs: 2000 });
    expect(recoverySeen(def, run).map((x) => x.method)).toEqual(['GET']);
    expect(run.recoveryTrace.some((l) => /recover\.op1 +query found the order$/.test(l))).toBe(true);
    const quiet = await runScenario(scenario({ faults: { loseResponseAfterCommit: 1 } }), { service: probe('probe', { settleMs: 50, leased: false }, ok) });
    expect(quiet.recoveryTrace).toEqual([]);
  });

  it('the faults stop: counters still armed after the main run (lost answers, crashes, pauses) fire no more', async () => {
    // Each counter is 5 but the main run used one (or none): left armed, the
    // resubmission would be lost, crash, or pause past its timeout.
    for (const faults of [{ loseResponseAfterCommit: 5 }, { crashMidRequest: 5 }, { pause: { atStep: 'work', ms: 5000, count: 5 } }]) {
      const def = probe('probe', { settleMs: 50, leased: false }, failFirst(ok));
      const run = await runScenario(scenario({ faults }), { service: def });
      // (loseResponseAfterCommit fires on the main run's 503 too: a lost answer ends it as well.)
      expect(run.recovery.get('op1'), JSON.stringify(faults)).toMatchObject({ kind: 'success', attempts: 1 });
    }
  });

  it('success needs a 2xx: 200 is one; 300 is neither a success nor retryable, so it is a refusal with its status', async () => {
    for (const [status, outcome] of [
      [200, { kind: 'success', attempts: 1, last: 'HTTP 200', headers: expect.any(Object), body: '{"error":"no"}' }],
      [299, { kind: 'success', attempts: 1, last: 'HTTP 299', headers: expect.any(Object), body: '{"error":"no"}' }],
      [300, { kind: 'refused', attempts: 1, last: 'HTTP 300', status: 300 }],
      [422, { kind: 'refused', attempts: 1, last: 'HTTP 422', status: 422 }],
    ] as const) {
      const def = probe('probe', { settleMs: 50, leased: false }, failFirst(async () => ({ status, effect: false })));
      const run = await runScenario(scenario(), { service: def });
      expect(run.recovery.get('op1'), String(status)).toEqual({ ...outcome, fromMs: run.result.timeMs + 51, timeoutMs: 2000 });
    }
  });

  it('a retryable answer (409, 503, 500) is retried with backoff until a 2xx', async () => {
    const statuses = [409, 503, 500];
    const def = probe('probe', { settleMs: 50, leased: false }, failFirst(async (n) => (n - 2 < statuses.length ? { status: statuses[n - 2]!, effect: false } : { status: 201, effect: true })));
    const run = await runScenario(scenario(), { service: def });
    expect(run.recovery.get('op1')).toMatchObject({ kind: 'success', attempts: 4, last: 'HTTP 201' });
    const posts = recoverySeen(def, run).filter((x) => x.method === 'POST').map((x) => x.atMs);
    // Full Jitter: each wait is in [0, 20 · 2^n) ms, n ≤ 4 — never nothing at all three times over.
    expect(posts[3]! - posts[0]!).toBeGreaterThan(3 * 2);
  });

  it('the budget: 2 × (lease + timeout + processing) + 1 s of resubmissions, then the phase asks once more and gives up, saying what the last answer was', async () => {
    // Every POST is answered 503 after 400 ms of processing, past the 100 ms timeout; the lease is 1000 → budget 4000 ms.
    const def = probe('probe', { settleMs: 1000, leased: true }, async () => ({ status: 503, effect: false }));
    const run = await runScenario(scenario({ client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 100 }, faults: { slowMs: 400 } }), { service: def });
    const rec = run.recovery.get('op1')!;
    const startMs = run.result.timeMs + 1001;
    expect(rec).toMatchObject({ kind: 'gave_up', fromMs: startMs, timeoutMs: 100, last: 'timeout' });
    const after = recoverySeen(def, run);
    const posts = after.filter((x) => x.method === 'POST');
    expect(rec.attempts).toBe(posts.length);
    // GET first, POSTs, and one last GET after the budget ran out.
    expect(after.map((x) => x.method)).toEqual(['GET', ...posts.map(() => 'POST'), 'GET']);
    // Each POST is given up 100 ms after it is sent (1 ms before the service sees it).
    const answeredAt = (p: Seen) => p.atMs - 1 + 100;
    expect(answeredAt(posts.at(-1)!) - startMs).toBeGreaterThanOrEqual(4000);
    expect(answeredAt(posts.at(-2)!) - startMs).toBeLessThan(4000);
    expect(after.at(-1)!.atMs).toBe(answeredAt(posts.at(-1)!) + 1);
  });

  it('asking once more turns a resubmission that made the effect without an answer into `found`, not a lack of progress', async () => {
    // A leased service whose processing (400 ms) outlasts the client's 100 ms timeout: every
    // resubmission times out, the first one makes the order.
    const def = probe('probe', { settleMs: 1000, leased: true }, failFirst(async () => ({ status: 201, effect: true })));
    const run = await runScenario(scenario({ client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 100 }, faults: { slowMs: 400 } }), { service: def });
    const posts = recoverySeen(def, run).filter((x) => x.method === 'POST');
    expect(posts.length).toBeGreaterThan(1);
    expect(run.recovery.get('op1')).toEqual({ kind: 'found', attempts: posts.length, fromMs: run.result.timeMs + 1001, timeoutMs: 100 });
    expect(run.violations).toEqual([]);
  });

  it('at most 200 resubmissions: a service that answers 409 for ever gets 200 of them within a long budget, then the phase gives up', async () => {
    const def = probe('probe', { settleMs: 60_000, leased: true }, async () => ({ status: 409, effect: false }));
    const run = await runScenario(scenario(), { service: def });
    expect(run.recovery.get('op1')).toMatchObject({ kind: 'gave_up', attempts: 200, last: 'HTTP 409' });
    const after = recoverySeen(def, run);
    expect(after.filter((x) => x.method === 'POST')).toHaveLength(200);
    // Well inside the budget of 2 × (60 000 + 2000) + 1000 ms.
    expect(after.at(-1)!.atMs - run.recovery.get('op1')!.fromMs).toBeLessThan(60_000);
    expect(run.violations.map((v) => v.detail)).toEqual(['no order acknowledged after the faults stopped and every lease expired (from t=' + (run.result.timeMs + 60_001).toFixed(0) + ' ms): 200 resubmission(s) got no success, the last HTTP 409; no order exists']);
  });

  it('the last question waits out the processing time, as an unleased client would: a slow read still answers it', async () => {
    // The query itself takes 300 ms here (a read of the slow store): the 100 ms timeout never hears it,
    // the last ask (up to 4 × 1 + 1 + 400 = 405 ms) does.
    const def = probe('probe', { settleMs: 1000, leased: true }, failFirst(async () => ({ status: 201, effect: true })));
    const slowRead: ServiceDefinition = {
      ...def,
      async handle(req, sim) {
        if (req.method === 'GET') await sim.sleep(300);
        return def.handle(req, sim);
      },
    };
    const run = await runScenario(scenario({ client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 100 }, faults: { slowMs: 400 } }), { service: slowRead });
    expect(run.recovery.get('op1')).toMatchObject({ kind: 'found', timeoutMs: 100 });
    expect(run.violations).toEqual([]);
  });

  it('at the cap of 200 as at the end of the budget, the phase asks once more before giving up', async () => {
    // The slow leased service above with a 30 s lease: the budget (2 × (30 000 + 100 + 400) + 1000 ms)
    // outlasts 200 timed-out resubmissions, so the cap, not the budget, ends them.
    const def = probe('probe', { settleMs: 30_000, leased: true }, failFirst(async () => ({ status: 201, effect: true })));
    const run = await runScenario(scenario({ client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 100 }, faults: { slowMs: 400 } }), { service: def });
    const after = recoverySeen(def, run);
    expect(after.filter((x) => x.method === 'POST')).toHaveLength(200);
    expect(after.at(-1)!.method).toBe('GET');
    expect(run.recovery.get('op1')).toEqual({ kind: 'found', attempts: 200, fromMs: run.result.timeMs + 30_001, timeoutMs: 100 });
    expect(run.violations).toEqual([]);
  });

  it('a timeout is the last answer\'s words when nothing came back', async () => {
    const def = probe('probe', { settleMs: 100, leased: true }, failFirst(async (_n, sim) => (await sim.sleep(10_000), { status: 201, effect: false })));
    const run = await runScenario(scenario({ client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 100 } }), { service: def });
    expect(run.recovery.get('op1')).toMatchObject({ kind: 'gave_up', last: 'timeout', timeoutMs: 100 });
  });
});

describe('what the recovery phase asks and sends', () => {
  it('the backoff between resubmissions stops growing at the policy\'s 4th retry, so the budget, not the wait, ends the phase', async () => {
    // codex-sampling doubles without a cap (200 ms × 2^(n−1) ± 10 %): held at n = 4 it waits at most 1760 ms.
    const def = probe('probe', { settleMs: 4000, leased: true }, async () => ({ status: 503, effect: false }));
    const run = await runScenario(scenario({ client: { keySource: 'tool_call', maxAttempts: 1, policy: 'codex-sampling' } }), { service: def });
    const posts = recoverySeen(def, run).filter((x) => x.method === 'POST').map((x) => x.atMs);
    const gaps = posts.slice(1).map((t, i) => t - posts[i]!);
    expect(gaps.length).toBeGreaterThan(6);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1760 + 2);
    expect(Math.max(...gaps)).toBeGreaterThan(1400 + 2);
  });

  it('a query that got no answer shows nothing, whatever `found` would make of one', async () => {
    // The GET outlasts the 2 s timeout; `found` here would take any answer as the effect.
    const def = probe('probe', { settleMs: 50, leased: false }, failFirst(ok));
    const slowGet: ServiceDefinition = {
      ...def,
      progress: { ...def.progress!, found: () => true },
      async handle(req, sim) {
        if (req.method === 'GET') await sim.sleep(10_000);
        return def.handle(req, sim);
      },
    };
    const run = await runScenario(scenario(), { service: slowGet });
    expect(run.recovery.get('op1')).toMatchObject({ kind: 'success', attempts: 1 });
  });

  it('a recovery phase that never ends is stopped by the kernel\'s limits, and the message says how to replay it', async () => {
    // Every resubmission is answered 503 after a service-side loop of 1 ms sleeps that never ends.
    const def = probe('spins', { settleMs: 50, leased: false }, failFirst(async (_n, sim) => {
      for (;;) await sim.sleep(1);
    }));
    const e = await runScenario(scenario({ service: { module: 'spins' } }), { service: def }).then(() => undefined, (x: unknown) => x);
    expect((e as Error).name).toBe('SimLimitError');
    expect((e as Error).message).toContain("Replay: retrysim replay <file> (scenario 'recovery probe', recovery phase, seed 3)");
  });

  it('the query and the resubmission carry the operation\'s tenant; the default tenant sends no header', async () => {
    const def = probe('probe', { settleMs: 50, leased: false }, failFirst(ok));
    const run = await runScenario(scenario({ operations: [
      { id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1', tenant: 'acme' },
      { id: 'op2', runId: 'order-2', module: 'shop', title: 'Pay order 2', startMs: 5000 },
    ] }), { service: def });
    const after = recoverySeen(def, run);
    expect(after.filter((x) => x.tenant === 'acme').map((x) => `${x.method} ${x.path}`)).toEqual(['GET /orders?ref=order-1', 'POST /orders']);
    expect(run.recovery.get('op1')).toMatchObject({ kind: 'success' });
    // op2 succeeded in the main run: nothing to recover.
    expect(run.recovery.has('op2')).toBe(false);
    expect(after.every((x) => x.path !== '/orders?ref=order-2')).toBe(true);
  });

  it('an operation that succeeded in the main run is not recovered at all; only those without a success are', async () => {
    const def = probe('probe', { settleMs: 50, leased: false }, ok);
    const run = await runScenario(scenario(), { service: def, keepTrace: true });
    expect(run.recovery.size).toBe(0);
    expect(run.recoveryTrace).toEqual([]);
    expect(recoverySeen(def, run)).toEqual([]);
    // One success among its workers is enough: the other worker's failure is not recovered.
    const two = probe('probe', { settleMs: 50, leased: false }, failFirst(ok));
    const r2 = await runScenario(scenario({ operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1', workers: 2, staggerMs: 10 }] }), { service: two });
    expect(r2.operations[0]!.results.map((x) => x.kind).sort()).toEqual(['success', 'unknown']);
    expect(r2.recovery.size).toBe(0);
  });

  it('an operation that never sent a request has nothing to resubmit; the others recover as usual', async () => {
    const def = probe('probe', { settleMs: 50, leased: false }, ok);
    const s = scenario({ operations: [
      { id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' },
      { id: 'op2', runId: 'order-2', module: 'shop', title: 'Pay order 2' },
    ] });
    const sdb = simDatabase(def);
    try {
      const hosts = hostInstances(s, def, sdb);
      const unknown = { kind: 'unknown' as const, error: 'outcome unknown', attempts: 1 };
      const ends: OperationEnd[] = ['op1', 'op2'].map((id, i) => ({ id, runId: `order-${i + 1}`, tenant: 'default', keySource: 'tool_call', attempts: [], results: [unknown] }));
      const body = JSON.stringify({ ref: 'order-2', title: 'Pay order 2' });
      const lastRequests = new Map([['op2', { method: 'POST', path: '/orders', headers: { 'content-type': 'application/json', 'idempotency-key': 'k2' }, body }]]);
      const r = await runRecovery({ scenario: s, progress: def.progress!, instances: hosts, mainEndMs: 1234.5, ends, lastRequests, keepTrace: true });
      expect([...r.outcomes.keys()]).toEqual(['op2']);
      expect(r.outcomes.get('op2')).toEqual({ kind: 'success', attempts: 1, fromMs: 1234.5 + 50 + 1, timeoutMs: 2000, last: 'HTTP 201', headers: expect.any(Object), body: '{"id":1}' });
      expect(r.trace.length).toBeGreaterThan(0);
    } finally {
      releaseDatabase(sdb);
    }
  });

  it('a recovery request the service never answers is a one-line ServiceError naming the service', async () => {
    const def = probe('never-answers', { settleMs: 50, leased: false }, failFirst(() => new Promise(() => {})));
    const e = await runScenario(scenario({ service: { module: 'never-answers' } }), { service: def }).then(() => undefined, (x: unknown) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as Error).message).toMatch(/never-answers.*never answered/);
  });
});

describe('the progress query\'s headers (operation.headers: an authenticated endpoint)', () => {
  it('the progress query carries the operation\'s own headers, not its body type or key; the tenant is set anew', async () => {
    const s = loadScenario('scenarios/canonical/lost_response/key_atomic--tool_call.json');
    const sent: TrackerRequest[] = [];
    const req: TrackerRequest = { method: 'POST', path: '/orders', headers: { 'content-type': 'application/json', authorization: 'Bearer token-globex', 'x-request-source': 'web', 'idempotency-key': 'k1', 'x-tenant': 'globex' }, body: '{"ref":"run-1"}' };
    const outcome = await recoverOperation({
      scenario: s, progress: authed.progress!, end: { id: 'op1', runId: 'run-1', tenant: 'globex', keySource: 'tool_call', attempts: [], results: [] }, req, startMs: 0, timeoutMs: 100, budgetMs: 1000,
      send: async (x) => {
        sent.push(x);
        return { kind: 'response', status: 200, headers: {}, body: '{"orders":[1]}' };
      },
      sleep: async () => {}, now: () => 0, rng: new Prng(1),
    });
    expect(outcome.kind).toBe('found');
    expect(sent).toEqual([{ method: 'GET', path: '/orders?ref=run-1', headers: { authorization: 'Bearer token-globex', 'x-request-source': 'web', 'x-tenant': 'globex' }, body: '' }]);
    // The default tenant's query sends no tenant header, as before, whatever its request said.
    sent.length = 0;
    await recoverOperation({
      scenario: s, progress: authed.progress!, end: { id: 'op1', runId: 'run-1', tenant: 'default', keySource: 'tool_call', attempts: [], results: [] }, req: { ...req, headers: { 'content-type': 'application/json', 'idempotency-key': 'k1', 'x-tenant': 'default' } }, startMs: 0, timeoutMs: 100, budgetMs: 1000,
      send: async (x) => {
        sent.push(x);
        return { kind: 'response', status: 200, headers: {}, body: '{"orders":[1]}' };
      },
      sleep: async () => {}, now: () => 0, rng: new Prng(1),
    });
    expect(sent.map((x) => x.headers)).toEqual([{}]);
  });
});

describe('the recovery phase\'s clock', () => {
  it('reads the scenario\'s epoch, as the main run\'s does: a handler\'s Date.now() in the phase is the epoch plus the phase\'s virtual time', async () => {
    const EPOCH = Date.UTC(2026, 0, 1); // real-time: allowed (a fixed instant, not the clock)
    const dates: number[] = [];
    const def = probe('probe', { settleMs: 700, leased: true }, failFirst(async () => {
      dates.push(Date.now());
      return { status: 201, effect: true };
    }));
    const run = await runScenario(scenario({ service: { module: 'probe', epochMs: EPOCH } }), { service: def });
    const post = def.seen.filter((x) => x.method === 'POST').pop()!; // the phase's resubmission (the main run's was refused)
    // sim.now() is the same clock: both read the epoch plus the phase's virtual time, after the main run's end.
    expect(dates).toEqual([post.atMs]);
    expect(post.atMs - EPOCH).toBeGreaterThan(run.result.timeMs);
    expect(post.atMs - EPOCH).toBeLessThan(run.result.timeMs + 10_000);
  });
});
