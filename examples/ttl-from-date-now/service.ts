/**
 * POST /payments with an Idempotency-Key whose record expires: the key is
 * claimed, the payment charged and the answer stored in one transaction
 * (no race), and a key is honoured until `expires_at`, computed from
 * `Date.now()` — as most real services compute TTLs and leases.
 *
 * The bug: the TTL is written in seconds (`KEY_TTL = 10 * 60`, "ten
 * minutes") and added to `Date.now()`, which is in milliseconds. The key
 * lives 600 ms, not ten minutes: a client whose answer was lost and who
 * retries after a backoff longer than that is charged again.
 */
import type { ServiceDefinition } from 'retrysim';

/** How long a key is honoured: ten minutes... in seconds. */
const KEY_TTL = 10 * 60;

const service = {
  name: 'ttl-from-date-now',
  tables: ['payments', 'idempotency_keys'],
  setup(db) {
    db.exec(`
      CREATE TABLE payments (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL, amount_cents INTEGER NOT NULL);
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, response TEXT NOT NULL, expires_at INTEGER NOT NULL);
    `);
  },
  steps: ['charge'],
  operation: {
    path: '/payments',
    body: (op) => JSON.stringify({ order_id: op.runId, item: op.title, amount_cents: 1999 }),
  },
  effects: {
    noun: 'payment',
    of: (db, op) => db.prepare('SELECT id FROM payments WHERE order_id = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    owner: (db, id) => db.prepare('SELECT order_id AS runId, tenant FROM payments WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
    total: (db) => db.prepare('SELECT count(*) FROM payments').pluck().get() as number,
  },
  async handle(req, sim) {
    if (req.method !== 'POST' || req.path !== '/payments') return { status: 404, body: '{"error":"not found"}' };
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = req.headers['idempotency-key'];
    let body: { order_id?: unknown; amount_cents?: unknown };
    try {
      body = JSON.parse(req.body);
    } catch {
      return { status: 400, body: '{"error":"malformed JSON"}' };
    }
    if (typeof body !== 'object' || body === null || typeof body.order_id !== 'string' || !Number.isInteger(body.amount_cents)) {
      return { status: 400, body: '{"error":"expected {order_id: string, amount_cents: integer}"}' };
    }
    const scoped = key === undefined ? undefined : JSON.stringify([tenant, key]);
    await sim.step('charge');
    // One transaction: an unexpired key answers what it answered the first
    // time; otherwise charge and (re)claim the key until Date.now() + TTL.
    const answer = sim.db.transaction(() => {
      const now = Date.now();
      if (scoped !== undefined) {
        const seen = sim.db.prepare('SELECT body, response FROM idempotency_keys WHERE key = ? AND expires_at > ?').get(scoped, now) as { body: string; response: string } | undefined;
        if (seen && seen.body !== req.body) return { status: 422, body: '{"error":"idempotency key reused with a different body"}' };
        if (seen) return { status: 201, headers: { 'idempotent-replay': 'true' }, body: seen.response };
      }
      const id = Number(sim.db.prepare('INSERT INTO payments (tenant, order_id, amount_cents) VALUES (?, ?, ?)').run(tenant, body.order_id as string, body.amount_cents as number).lastInsertRowid);
      const response = JSON.stringify({ id });
      if (scoped !== undefined) sim.db.prepare('INSERT OR REPLACE INTO idempotency_keys (key, body, response, expires_at) VALUES (?, ?, ?, ?)').run(scoped, req.body, response, now + KEY_TTL);
      return { status: 201, body: response };
    })();
    return answer;
  },
} satisfies ServiceDefinition;

export default service;
