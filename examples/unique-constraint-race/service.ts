/**
 * POST /orders with an Idempotency-Key, trusting a UNIQUE constraint to
 * catch duplicates: look the key up, create the order, then record the key
 * — `idempotency_keys.key` is the PRIMARY KEY, so "a duplicate insert will
 * just fail". It does fail: a twin request with the same key (a retry sent
 * while the first attempt is still working, or two workers racing) passes
 * the lookup too, creates a second order, and then its key INSERT throws
 * `UNIQUE constraint failed` — after the order was committed in its own
 * transaction. The framework answers 500, the client retries, the retry
 * replays the stored answer: the customer sees one order and has two.
 */
import type { ServiceDefinition } from 'retrysim';

const service = {
  name: 'unique-constraint-race',
  tables: ['orders', 'idempotency_keys'],
  setup(db) {
    db.exec(`
      CREATE TABLE orders (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_ref TEXT NOT NULL, item TEXT NOT NULL);
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, response TEXT NOT NULL);
    `);
  },
  steps: ['lookup', 'create', 'remember'],
  operation: {
    path: '/orders',
    body: (op) => JSON.stringify({ order_ref: op.runId, item: op.title }),
  },
  effects: {
    noun: 'order',
    of: (db, op) => db.prepare('SELECT id FROM orders WHERE order_ref = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    owner: (db, id) => db.prepare('SELECT order_ref AS runId, tenant FROM orders WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
    total: (db) => db.prepare('SELECT count(*) FROM orders').pluck().get() as number,
  },
  async handle(req, sim) {
    if (req.method !== 'POST' || req.path !== '/orders') return { status: 404, body: '{"error":"not found"}' };
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = req.headers['idempotency-key'];
    let body: { order_ref?: unknown; item?: unknown };
    try {
      body = JSON.parse(req.body);
    } catch {
      return { status: 400, body: '{"error":"malformed JSON"}' };
    }
    if (typeof body !== 'object' || body === null || typeof body.order_ref !== 'string' || typeof body.item !== 'string') {
      return { status: 400, body: '{"error":"expected {order_ref: string, item: string}"}' };
    }
    const scoped = key === undefined ? undefined : JSON.stringify([tenant, key]);
    await sim.step('lookup');
    if (scoped !== undefined) {
      const seen = sim.db.prepare('SELECT body, response FROM idempotency_keys WHERE key = ?').get(scoped) as { body: string; response: string } | undefined;
      if (seen && seen.body !== req.body) return { status: 422, body: '{"error":"idempotency key reused with a different body"}' };
      if (seen) return { status: 201, headers: { 'idempotent-replay': 'true' }, body: seen.response };
    }
    await sim.step('create');
    const id = Number(sim.db.prepare('INSERT INTO orders (tenant, order_ref, item) VALUES (?, ?, ?)').run(tenant, body.order_ref as string, body.item as string).lastInsertRowid);
    const response = JSON.stringify({ id });
    await sim.step('remember');
    // "The PRIMARY KEY makes duplicates impossible": on a twin this throws
    // SqliteError: UNIQUE constraint failed — after its order was committed.
    if (scoped !== undefined) sim.db.prepare('INSERT INTO idempotency_keys (key, body, response) VALUES (?, ?, ?)').run(scoped, req.body, response);
    return { status: 201, body: response };
  },
} satisfies ServiceDefinition;

export default service;
