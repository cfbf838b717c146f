/**
 * POST /orders with an Idempotency-Key, backed by SQLite, written as two
 * transactions: first the effect (the order), then — in a second
 * transaction — the key record with the stored answer. A crash between the
 * two answers 500 with the order already committed but the key unknown, so
 * the client's retry passes the key check and creates a second order. (Two
 * concurrent requests with the same key can also both pass the check.)
 */
import type { ServiceDefinition } from 'retrysim';

interface KeyRow {
  body: string;
  response: string;
}

const service = {
  name: 'two-transactions',
  tables: ['orders', 'idempotency_keys'],
  setup(db) {
    db.exec(`
      CREATE TABLE orders (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_ref TEXT NOT NULL, item TEXT NOT NULL);
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, response TEXT NOT NULL);
    `);
  },
  steps: ['check', 'create', 'remember'],
  crashPoints: ['between-transactions'],
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
    await sim.step('check');
    if (scoped !== undefined) {
      const seen = sim.db.prepare('SELECT body, response FROM idempotency_keys WHERE key = ?').get(scoped) as KeyRow | undefined;
      if (seen && seen.body !== req.body) return { status: 422, body: '{"error":"idempotency key reused with a different body"}' };
      if (seen) return { status: 201, headers: { 'idempotent-replay': 'true' }, body: seen.response };
    }
    await sim.step('create');
    // Transaction 1: the effect.
    const id = Number(sim.db.prepare('INSERT INTO orders (tenant, order_ref, item) VALUES (?, ?, ?)').run(tenant, String(body.order_ref), String(body.item)).lastInsertRowid);
    const response = JSON.stringify({ id });
    // The bug: a crash here leaves the order committed and the key unknown.
    sim.crashPoint('between-transactions');
    await sim.step('remember');
    // Transaction 2: the key record.
    if (scoped !== undefined) sim.db.prepare('INSERT OR REPLACE INTO idempotency_keys (key, body, response) VALUES (?, ?, ?)').run(scoped, req.body, response);
    return { status: 201, body: response };
  },
} satisfies ServiceDefinition;

export default service;
