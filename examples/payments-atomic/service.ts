/**
 * POST /payments with an Idempotency-Key, done right: the key is *claimed*
 * in one write transaction (BEGIN IMMEDIATE) before any work, and the
 * payment is written in the same transaction that marks the key done. A
 * concurrent duplicate finds the claim and gets 409 (the client retries); a
 * retry after a lost answer gets the stored answer; the same key with a
 * different body gets 422. A crash after the claim releases it, so the
 * retry can take over at once.
 */
import type { ServiceDefinition, ServiceSim } from 'retrysim';

interface KeyRow {
  body: string;
  status: 'in_progress' | 'done';
  response: string | null;
}

type Claim = { kind: 'claimed' } | { kind: 'answer'; status: number; body: string; replay?: boolean };

function claim(sim: ServiceSim, scoped: string, body: string): Claim {
  return sim.db.transaction((): Claim => {
    const row = sim.db.prepare('SELECT body, status, response FROM idempotency_keys WHERE key = ?').get(scoped) as KeyRow | undefined;
    if (row === undefined) {
      sim.db.prepare("INSERT INTO idempotency_keys (key, body, status) VALUES (?, ?, 'in_progress')").run(scoped, body);
      return { kind: 'claimed' };
    }
    if (row.body !== body) return { kind: 'answer', status: 422, body: '{"error":"idempotency key reused with a different body"}' };
    if (row.status === 'done') return { kind: 'answer', status: 201, body: row.response!, replay: true };
    return { kind: 'answer', status: 409, body: '{"error":"a request with this key is in progress"}' };
  }).immediate();
}

const service = {
  name: 'payments-atomic',
  tables: ['payments', 'idempotency_keys'],
  setup(db) {
    db.exec(`
      CREATE TABLE payments (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL, item TEXT NOT NULL, amount_cents INTEGER NOT NULL);
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL, response TEXT);
    `);
  },
  steps: ['claim', 'charge', 'finish'],
  crashPoints: ['after-claim'],
  operation: {
    path: '/payments',
    body: (op) => JSON.stringify({ order_id: op.runId, item: op.title, amount_cents: 1999 }),
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
    let body: { order_id?: unknown; item?: unknown; amount_cents?: unknown };
    try {
      body = JSON.parse(req.body);
    } catch {
      return { status: 400, body: '{"error":"malformed JSON"}' };
    }
    // Refused before anything is written, so a bad body never holds a key.
    if (typeof body !== 'object' || body === null || typeof body.order_id !== 'string' || typeof body.item !== 'string' || !Number.isInteger(body.amount_cents) || (body.amount_cents as number) <= 0) {
      return { status: 400, body: '{"error":"expected {order_id: string, item: string, amount_cents: positive integer}"}' };
    }
    // Scoped by tenant, unambiguously: no key of one tenant can name another's entry.
    const scoped = JSON.stringify([tenant, key]);
    await sim.step('claim');
    const c = claim(sim, scoped, req.body);
    if (c.kind === 'answer') return { status: c.status, headers: c.replay ? { 'idempotent-replay': 'true' } : {}, body: c.body };
    try {
      await sim.step('charge');
      sim.crashPoint('after-claim');
    } catch (e) {
      // A live process that failed frees the key, so a retry need not wait.
      sim.db.prepare("DELETE FROM idempotency_keys WHERE key = ? AND status = 'in_progress'").run(scoped);
      throw e;
    }
    await sim.step('finish');
    const response = sim.db.transaction(() => {
      const id = Number(sim.db.prepare('INSERT INTO payments (tenant, order_id, item, amount_cents) VALUES (?, ?, ?, ?)').run(tenant, String(body.order_id), String(body.item), Number(body.amount_cents)).lastInsertRowid);
      const text = JSON.stringify({ id });
      sim.db.prepare("UPDATE idempotency_keys SET status = 'done', response = ? WHERE key = ?").run(text, scoped);
      return text;
    }).immediate();
    return { status: 201, body: response };
  },
} satisfies ServiceDefinition;

export default service;
