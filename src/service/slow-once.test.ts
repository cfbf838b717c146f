import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import type { ServiceDefinition } from './definition.js';

/** A request that passes its slow step three times (a loop of store calls, a hosted app's repeated `kv.get`). */
const loop: ServiceDefinition = {
  name: 'loop',
  tables: ['items'],
  setup: (db) => db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT)'),
  steps: ['read'],
  operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId }) },
  effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE run = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  async handle(req, sim) {
    for (let i = 0; i < 3; i++) await sim.step('read');
    const run = (JSON.parse(req.body) as { run: string }).run;
    const id = Number(sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run(run, req.headers['x-tenant'] ?? 'default').lastInsertRowid);
    return { status: 201, body: JSON.stringify({ id }) };
  },
};

describe('the slow fault is one slow stretch per request (SPEC §4: processing takes slow_ms)', () => {
  it('a request that reaches its slow step three times is slowed once', async () => {
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'slow-once', seed: 1, service: { module: 'loop' },
      client: { keySource: 'tool_call', timeoutMs: 10_000 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
      faults: { slowMs: 400, slowAtStep: 'read' },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }], expect: {},
    }));
    const r = await runScenario(s, { service: loop, keepTrace: true });
    expect(r.trace.filter((l) => /slow 400 ms after 'read'/.test(l))).toHaveLength(1);
    // 1 ms there, 400 ms of processing, 1 ms back (three slow stretches would be 1,200 ms).
    const answered = r.trace.find((l) => / answer 201 /.test(l))!;
    expect(Number(answered.trim().split(/\s+/)[0])).toBeLessThan(450);
    expect(r.reports.op1).toBe(1);
  });
});

/** Keyed writes and a read endpoint, every request slow at `read` (the deployment is slow, not broken). */
const slowReads: ServiceDefinition = {
  name: 'slow-reads',
  tables: ['items', 'keys'],
  setup: (db) => db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT); CREATE TABLE keys (key TEXT PRIMARY KEY, answer TEXT)'),
  steps: ['read'],
  operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId }) },
  effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE run = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  progress: {
    // Longer than timeout + processing: a lease that fits the deployment, so progress is judged (checkers/progress.ts excuses one that does not).
    settleMs: 3000,
    leased: true,
    query: (op) => ({ path: `/items?run=${op.runId}` }),
    found: (status, body) => status === 200 && (JSON.parse(body) as { ids: number[] }).ids.length > 0,
  },
  async handle(req, sim) {
    await sim.step('read');
    const tenant = req.headers['x-tenant'] ?? 'default';
    if (req.method === 'GET') {
      const run = new URLSearchParams(req.path.split('?')[1]).get('run');
      return { status: 200, body: JSON.stringify({ ids: sim.db.prepare('SELECT id FROM items WHERE run = ? AND tenant = ?').pluck().all(run, tenant) }) };
    }
    const key = JSON.stringify([tenant, req.headers['idempotency-key']]);
    const seen = sim.db.prepare('SELECT answer FROM keys WHERE key = ?').pluck().get(key) as string | undefined;
    if (seen !== undefined) return { status: 201, body: seen };
    const answer = sim.db.transaction(() => {
      const id = Number(sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { run: string }).run, tenant).lastInsertRowid);
      const a = JSON.stringify({ id });
      sim.db.prepare('INSERT INTO keys (key, answer) VALUES (?, ?)').run(key, a);
      return a;
    })();
    return { status: 201, body: answer };
  },
};

describe("the recovery phase's last ask waits out the processing time", () => {
  it('a leased service whose every answer takes longer than the client waits is not refuted on progress: the effect exists, and the last query says so', async () => {
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'slow-query', seed: 1, service: { module: 'slow-reads' },
      client: { keySource: 'tool_call', timeoutMs: 1000, maxAttempts: 1 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
      faults: { slowMs: 1500, slowAtStep: 'read' },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }], expect: {},
    }));
    const r = await runScenario(s, { service: slowReads });
    // The main run's only attempt timed out, but the item was made: the operation is done.
    expect(r.reports.op1).toBe(1);
    expect(r.violations).toEqual([]);
  });
});
