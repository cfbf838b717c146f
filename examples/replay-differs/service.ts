/**
 * POST /orders with an Idempotency-Key, in one transaction: look the key up
 * and, if it is new, insert the order and the key together. Exactly one
 * order per key, whatever is lost, slow, killed or concurrent.
 *
 * The bug: the key table keeps only the order id, not the answer. A retry
 * is answered `200 {"id":n}` ("nothing was created this time") while the
 * first answer was `201 {"id":n}`. A client that branches on 201 vs 200 —
 * or a proxy that caches by status — sees two different outcomes of one
 * request: SPEC §5 invariant 6 (`replay-equals-first`) fails.
 */
import type { ServiceDefinition } from 'retrysim';

interface KeyRow {
  body: string;
  order_id: number;
}

const service = {
  name: 'replay-differs',
  tables: ['orders', 'idempotency_keys'],
  setup(db) {
    db.exec(`
      CREATE TABLE orders (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_ref TEXT NOT NULL, item TEXT NOT NULL);
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, order_id INTEGER NOT NULL);
    `);
  },
  steps: ['receive', 'commit'],
  operation: {
    path: '/orders',
    body: (op) => JSON.stringify({ order_ref: op.runId, item: op.title }),
  },
  effects: {
    noun: 'order',
    of: (db, op) => db.prepare('SELECT id FROM orders WHERE order_ref = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    owner: (db, id) => db.prepare('SELECT order_ref AS runId, tenant FROM orders WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
  },
  async handle(req, sim) {
    if (req.method !== 'POST' || req.path !== '/orders') return { status: 404, body: '{"error":"not found"}' };
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = req.headers['idempotency-key'];
    if (key === undefined) return { status: 400, body: '{"error":"Idempotency-Key header required"}' };
    let body: { order_ref?: unknown; item?: unknown };
    try {
      body = JSON.parse(req.body);
    } catch {
      return { status: 400, body: '{"error":"malformed JSON"}' };
    }
    if (typeof body !== 'object' || body === null || typeof body.order_ref !== 'string' || typeof body.item !== 'string') {
      return { status: 400, body: '{"error":"expected {order_ref: string, item: string}"}' };
    }
    const scoped = JSON.stringify([tenant, key]);
    await sim.step('receive');
    await sim.step('commit');
    return sim.db.transaction(() => {
      const row = sim.db.prepare('SELECT body, order_id FROM idempotency_keys WHERE key = ?').get(scoped) as KeyRow | undefined;
      if (row !== undefined && row.body !== req.body) return { status: 422, body: '{"error":"idempotency key reused with a different body"}' };
      // THE BUG: the replay rebuilds an answer from the id alone, with another status.
      if (row !== undefined) return { status: 200, headers: { 'idempotent-replay': 'true' }, body: JSON.stringify({ id: row.order_id }) };
      const id = Number(sim.db.prepare('INSERT INTO orders (tenant, order_ref, item) VALUES (?, ?, ?)').run(tenant, String(body.order_ref), String(body.item)).lastInsertRowid);
      sim.db.prepare('INSERT INTO idempotency_keys (key, body, order_id) VALUES (?, ?, ?)').run(scoped, req.body, id);
      return { status: 201, body: JSON.stringify({ id }) };
    }).immediate();
  },
} satisfies ServiceDefinition;

export default service;
