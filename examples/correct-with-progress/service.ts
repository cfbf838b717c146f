/**
 * POST /orders with an Idempotency-Key, correct and live without a lease:
 * one write transaction looks the key up and, for a new key, inserts the
 * order *and* the key with the exact answer it stores. There is no
 * "in progress" state, so nothing can be left behind by a crash, a kill or
 * a pause: a retry either finds the stored answer (and gets it verbatim) or
 * finds nothing and does the whole job itself. The same key with another
 * body gets 422. `GET /orders?ref=` tells a client whether its order exists.
 *
 * It opts in to `progress` (SPEC §5 invariant 5): once the faults stop,
 * every order ends acknowledged — `leased: false`, as nothing here expires.
 *
 * `canary` is the same service with one edit (`keyWithOrder: false`): the
 * key is stored in a second transaction after the order, so a crash between
 * the two — or a concurrent duplicate — makes a second order (exactly-one).
 */
import type { ServiceDefinition } from 'retrysim';

interface KeyRow {
  body: string;
  status: number;
  response: string;
}

function orderService(o: { keyWithOrder: boolean }) {
  return {
    name: o.keyWithOrder ? 'correct-with-progress' : 'correct-with-progress-canary',
    tables: ['orders', 'idempotency_keys'],
    setup(db) {
      db.exec(`
        CREATE TABLE orders (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_ref TEXT NOT NULL, item TEXT NOT NULL);
        CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, status INTEGER NOT NULL, response TEXT NOT NULL);
      `);
    },
    steps: ['validate', 'commit', 'record-key'],
    crashPoints: ['after-order'],
    operation: {
      path: '/orders',
      body: (op) => JSON.stringify({ order_ref: op.runId, item: op.title }),
    },
    effects: {
      noun: 'order',
      of: (db, op) => db.prepare('SELECT id FROM orders WHERE order_ref = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
      owner: (db, id) => db.prepare('SELECT order_ref AS runId, tenant FROM orders WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
    },
    progress: {
      settleMs: 0,
      leased: false,
      query: (op) => ({ path: `/orders?ref=${encodeURIComponent(op.runId)}` }),
      found: (status, body) => status === 200 && (JSON.parse(body) as { orders: unknown[] }).orders.length > 0,
    },
    async handle(req, sim) {
      const tenant = req.headers['x-tenant'] ?? 'default';
      if (req.method === 'GET' && req.path.startsWith('/orders?ref=')) {
        const ref = decodeURIComponent(req.path.slice('/orders?ref='.length));
        const ids = sim.db.prepare('SELECT id FROM orders WHERE order_ref = ? AND tenant = ? ORDER BY id').pluck().all(ref, tenant);
        return { status: 200, body: JSON.stringify({ orders: ids }) };
      }
      if (req.method !== 'POST' || req.path !== '/orders') return { status: 404, body: '{"error":"not found"}' };
      const key = req.headers['idempotency-key'];
      if (key === undefined || key.length === 0 || key.length > 255) return { status: 400, body: '{"error":"Idempotency-Key header of 1-255 characters required"}' };
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
      await sim.step('validate');
      await sim.step('commit');
      const done = sim.db.transaction(() => {
        const row = sim.db.prepare('SELECT body, status, response FROM idempotency_keys WHERE key = ?').get(scoped) as KeyRow | undefined;
        if (row !== undefined && row.body !== req.body) return { status: 422, body: '{"error":"idempotency key reused with a different body"}' };
        if (row !== undefined) return { status: row.status, headers: { 'idempotent-replay': 'true' }, body: row.response };
        const id = Number(sim.db.prepare('INSERT INTO orders (tenant, order_ref, item) VALUES (?, ?, ?)').run(tenant, body.order_ref, body.item).lastInsertRowid);
        const response = JSON.stringify({ id });
        if (o.keyWithOrder) sim.db.prepare('INSERT INTO idempotency_keys (key, body, status, response) VALUES (?, ?, 201, ?)').run(scoped, req.body, response);
        return { status: 201, body: response, record: response };
      }).immediate();
      if (!o.keyWithOrder && 'record' in done) {
        // The canary's edit: the key is recorded in a second transaction, after the order.
        await sim.step('record-key');
        sim.crashPoint('after-order');
        sim.db.prepare('INSERT OR REPLACE INTO idempotency_keys (key, body, status, response) VALUES (?, ?, 201, ?)').run(scoped, req.body, done.record);
      }
      return { status: done.status, ...('headers' in done ? { headers: done.headers } : {}), body: done.body };
    },
  } satisfies ServiceDefinition;
}

export const canary = orderService({ keyWithOrder: false });
export default orderService({ keyWithOrder: true });
