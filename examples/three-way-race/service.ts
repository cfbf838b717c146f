/**
 * POST /payments with an Idempotency-Key and a "hedge slot": a client may
 * hedge (send a duplicate within a few ms of the first, in case one path is
 * slow). A duplicate that arrives within 20 ms of the key's claim becomes
 * the follower: it waits briefly (40 ms) for the owner's answer and replays
 * it, else answers 409 and frees the slot. Later duplicates get 409 as
 * usual. The bug: a duplicate inside the hedge window that finds the slot
 * taken assumes the owner died ("an owner, a follower, and still a third
 * copy at once") and takes the key over. Two concurrent requests never
 * reach that branch, and a retry comes too late for the window; three
 * requests at once charge the order twice.
 */
import type { ServiceDefinition, ServiceSim } from 'retrysim';

interface KeyRow {
  body: string;
  status: 'in_progress' | 'done';
  response: string | null;
  follower: number;
  claimed_at: number;
}

type Claim = { kind: 'owner' } | { kind: 'follower' } | { kind: 'answer'; status: number; body: string; replay?: boolean };

/** How long a follower waits for the owner's answer before it gives up (and frees its slot). */
const FOLLOW_MS = 40;
/** A duplicate this close to the claim is a hedge (on either instance's clock). */
const HEDGE_MS = 20;
const POLL_MS = 10;

function claim(sim: ServiceSim, scoped: string, body: string): Claim {
  return sim.db.transaction((): Claim => {
    const row = sim.db.prepare('SELECT body, status, response, follower, claimed_at FROM idempotency_keys WHERE key = ?').get(scoped) as KeyRow | undefined;
    if (row === undefined) {
      sim.db.prepare("INSERT INTO idempotency_keys (key, body, status, follower, claimed_at) VALUES (?, ?, 'in_progress', 0, ?)").run(scoped, body, sim.now());
      return { kind: 'owner' };
    }
    if (row.body !== body) return { kind: 'answer', status: 422, body: '{"error":"idempotency key reused with a different body"}' };
    if (row.status === 'done') return { kind: 'answer', status: 201, body: row.response!, replay: true };
    if (Math.abs(sim.now() - row.claimed_at) >= HEDGE_MS) return { kind: 'answer', status: 409, body: '{"error":"a request with this key is in progress"}' };
    if (row.follower === 0) {
      sim.db.prepare('UPDATE idempotency_keys SET follower = 1 WHERE key = ?').run(scoped);
      return { kind: 'follower' };
    }
    // THE BUG: "an owner and a follower and still a third copy: the owner must be gone" — take over.
    sim.db.prepare('UPDATE idempotency_keys SET follower = 0 WHERE key = ?').run(scoped);
    return { kind: 'owner' };
  }).immediate();
}

const service = {
  name: 'three-way-race',
  tables: ['payments', 'idempotency_keys'],
  setup(db) {
    db.exec(`
      CREATE TABLE payments (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL, item TEXT NOT NULL);
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, body TEXT NOT NULL, status TEXT NOT NULL, response TEXT, follower INTEGER NOT NULL, claimed_at REAL NOT NULL);
    `);
  },
  steps: ['claim', 'charge', 'finish', 'follow'],
  crashPoints: ['after-claim'],
  operation: {
    path: '/payments',
    body: (op) => JSON.stringify({ order_id: op.runId, item: op.title }),
  },
  effects: {
    noun: 'payment',
    of: (db, op) => db.prepare('SELECT id FROM payments WHERE order_id = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    owner: (db, id) => db.prepare('SELECT order_id AS runId, tenant FROM payments WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
  },
  async handle(req, sim) {
    if (req.method !== 'POST' || req.path !== '/payments') return { status: 404, body: '{"error":"not found"}' };
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = req.headers['idempotency-key'];
    if (key === undefined) return { status: 400, body: '{"error":"Idempotency-Key header required"}' };
    let body: { order_id?: unknown; item?: unknown };
    try {
      body = JSON.parse(req.body);
    } catch {
      return { status: 400, body: '{"error":"malformed JSON"}' };
    }
    if (typeof body !== 'object' || body === null || typeof body.order_id !== 'string' || typeof body.item !== 'string') {
      return { status: 400, body: '{"error":"expected {order_id: string, item: string}"}' };
    }
    const scoped = JSON.stringify([tenant, key]);
    await sim.step('claim');
    const c = claim(sim, scoped, req.body);
    if (c.kind === 'answer') return { status: c.status, headers: c.replay ? { 'idempotent-replay': 'true' } : {}, body: c.body };
    if (c.kind === 'follower') {
      // Wait for the owner's answer and replay it; give up (freeing the slot) after FOLLOW_MS.
      for (let waited = 0; waited < FOLLOW_MS; waited += POLL_MS) {
        await sim.step('follow');
        const row = sim.db.prepare('SELECT status, response FROM idempotency_keys WHERE key = ?').get(scoped) as Pick<KeyRow, 'status' | 'response'> | undefined;
        if (row?.status === 'done') return { status: 201, headers: { 'idempotent-replay': 'true' }, body: row.response! };
        if (row === undefined) break; // the owner failed and released the key
        await sim.sleep(POLL_MS);
      }
      sim.db.prepare('UPDATE idempotency_keys SET follower = 0 WHERE key = ? AND follower = 1').run(scoped);
      return { status: 409, body: '{"error":"a request with this key is in progress"}' };
    }
    try {
      await sim.step('charge');
      sim.crashPoint('after-claim');
    } catch (e) {
      sim.db.prepare("DELETE FROM idempotency_keys WHERE key = ? AND status = 'in_progress'").run(scoped);
      throw e;
    }
    await sim.step('finish');
    const response = sim.db.transaction(() => {
      const id = Number(sim.db.prepare('INSERT INTO payments (tenant, order_id, item) VALUES (?, ?, ?)').run(tenant, String(body.order_id), String(body.item)).lastInsertRowid);
      const text = JSON.stringify({ id });
      sim.db.prepare("UPDATE idempotency_keys SET status = 'done', response = ? WHERE key = ?").run(text, scoped);
      return text;
    }).immediate();
    return { status: 201, body: response };
  },
} satisfies ServiceDefinition;

export default service;
