/**
 * POST /payments with an Idempotency-Key, backed by SQLite — the way it is
 * often first written: look the key up in one transaction, and if it is
 * new, charge and record the payment with its key in a second one. Between
 * the two, a concurrent request with the same key passes the same check.
 */
import type { ServiceDefinition } from 'retrysim';

interface KeyRow {
  body: string;
  response: string;
}

const service = {
  name: 'payments-check-then-insert',
  tables: ['payments', 'idempotency_keys'],
  setup(db) {
    db.exec(`
      CREATE TABLE payments (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL, item TEXT NOT NULL, amount_cents INTEGER NOT NULL);
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, response TEXT NOT NULL);
    `);
  },
  steps: ['check', 'charge'],
  crashPoints: ['after-charge'],
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
    const scoped = key === undefined ? undefined : JSON.stringify([tenant, key]);
    await sim.step('check');
    if (scoped !== undefined) {
      // Transaction 1: have we seen this key?
      const seen = sim.db.prepare('SELECT body, response FROM idempotency_keys WHERE key = ?').get(scoped) as KeyRow | undefined;
      if (seen && seen.body !== req.body) return { status: 422, body: '{"error":"idempotency key reused with a different body"}' };
      if (seen) return { status: 201, headers: { 'idempotent-replay': 'true' }, body: seen.response };
    }
    await sim.step('charge');
    // Transaction 2: charge and remember the key. INSERT OR REPLACE "cannot
    // fail" — and so never notices that another request got here first.
    const response = sim.db.transaction(() => {
      const id = Number(sim.db.prepare('INSERT INTO payments (tenant, order_id, item, amount_cents) VALUES (?, ?, ?, ?)').run(tenant, String(body.order_id), String(body.item), Number(body.amount_cents)).lastInsertRowid);
      const text = JSON.stringify({ id });
      if (scoped !== undefined) sim.db.prepare('INSERT OR REPLACE INTO idempotency_keys (key, body, response) VALUES (?, ?, ?)').run(scoped, req.body, text);
      return text;
    })();
    sim.crashPoint('after-charge');
    return { status: 201, body: response };
  },
} satisfies ServiceDefinition;

export default service;
