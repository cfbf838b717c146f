/**
 * A lease-based handler without fencing. The key is claimed with a lease
 * (so a request killed mid-way does not hold its key forever): an expired
 * claim may be taken over. But the finish does not check that the claim is
 * still *mine* — so a request that stalls past its lease (a GC pause) comes
 * back after another request took over and finished, and charges again.
 */
import type { ServiceDefinition, ServiceSim } from 'retrysim';

const LEASE_MS = 5_000; // longer than the client's 2 s timeout plus processing

interface KeyRow {
  body: string;
  status: 'in_progress' | 'done';
  locked_at: number;
  response: string | null;
}

type Claim = { kind: 'claimed' } | { kind: 'answer'; status: number; body: string; replay?: boolean };

function claim(sim: ServiceSim, scoped: string, body: string): Claim {
  return sim.db.transaction((): Claim => {
    const row = sim.db.prepare('SELECT body, status, locked_at, response FROM idempotency_keys WHERE key = ?').get(scoped) as KeyRow | undefined;
    if (row === undefined) {
      sim.db.prepare("INSERT INTO idempotency_keys (key, body, status, locked_at) VALUES (?, ?, 'in_progress', ?)").run(scoped, body, sim.now());
      return { kind: 'claimed' };
    }
    if (row.body !== body) return { kind: 'answer', status: 422, body: '{"error":"idempotency key reused with a different body"}' };
    if (row.status === 'done') return { kind: 'answer', status: 201, body: row.response!, replay: true };
    if (sim.now() - row.locked_at < LEASE_MS) return { kind: 'answer', status: 409, body: '{"error":"in progress"}' };
    // The lease ran out: take the key over.
    sim.db.prepare('UPDATE idempotency_keys SET locked_at = ? WHERE key = ?').run(sim.now(), scoped);
    return { kind: 'claimed' };
  }).immediate();
}

const service = {
  name: 'lease-without-fencing',
  tables: ['payments', 'idempotency_keys'],
  setup(db) {
    db.exec(`
      CREATE TABLE payments (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL, item TEXT NOT NULL);
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL, locked_at INTEGER NOT NULL, response TEXT);
    `);
  },
  steps: ['claim', 'charge', 'finish'],
  operation: {
    path: '/payments',
    body: (op) => JSON.stringify({ order_id: op.runId, item: op.title }),
  },
  effects: {
    of: (db, op) => db.prepare('SELECT id FROM payments WHERE order_id = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    owner: (db, id) => db.prepare('SELECT order_id AS runId, tenant FROM payments WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
    total: (db) => db.prepare('SELECT count(*) FROM payments').pluck().get() as number,
  },
  async handle(req, sim) {
    if (req.method !== 'POST' || req.path !== '/payments') return { status: 404, body: '{"error":"not found"}' };
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = req.headers['idempotency-key'];
    if (key === undefined) return { status: 400, body: '{"error":"Idempotency-Key header required"}' };
    const body = JSON.parse(req.body) as { order_id: string; item: string };
    const scoped = JSON.stringify([tenant, key]);
    await sim.step('claim');
    const c = claim(sim, scoped, req.body);
    if (c.kind === 'answer') return { status: c.status, headers: c.replay ? { 'idempotent-replay': 'true' } : {}, body: c.body };
    await sim.step('charge');
    await sim.step('finish');
    const response = sim.db.transaction(() => {
      const id = Number(sim.db.prepare('INSERT INTO payments (tenant, order_id, item) VALUES (?, ?, ?)').run(tenant, body.order_id, body.item).lastInsertRowid);
      const text = JSON.stringify({ id });
      // The bug: no "AND the claim is still mine" (a fencing token) here.
      sim.db.prepare("UPDATE idempotency_keys SET status = 'done', response = ? WHERE key = ?").run(text, scoped);
      return text;
    }).immediate();
    return { status: 201, body: response };
  },
} satisfies ServiceDefinition;

export default service;
