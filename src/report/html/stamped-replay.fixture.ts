/**
 * A service whose replay rebuilds its answer instead of returning the
 * stored one: it stamps `served_at` with the time of each answer, so a
 * retry's 201 differs from the first (replay-equals-first). Its claim has a
 * lease and its finish is fenced by the claim's time. Written from outside
 * the team (a `.mjs` service run from the packed tarball); its shrunk
 * counterexample has the first 201 die with its server as it leaves, so the
 * client's first success is a later answer (stamped-replay.fixture.json).
 */
import type { ServiceDefinition } from '../../service/definition.js';

const LEASE_MS = 10_000;

interface Body { customer: string; plan: string }

const service: ServiceDefinition = {
  name: 'subs',
  tables: ['subscriptions', 'idem'],
  setup(db) {
    db.exec(`CREATE TABLE subscriptions (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, customer TEXT NOT NULL, plan TEXT NOT NULL, created_at INTEGER NOT NULL);
             CREATE TABLE idem (tenant TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, locked_at INTEGER, sub_id INTEGER, PRIMARY KEY (tenant, key));`);
  },
  steps: ['claim', 'bill', 'finish'],
  crashPoints: ['billing'],
  operation: { path: '/subscriptions', body: (op) => JSON.stringify({ customer: op.runId, plan: op.title }) },
  effects: {
    noun: 'subscription',
    of: (db, op) => db.prepare('SELECT id FROM subscriptions WHERE customer = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    owner: (db, id) => db.prepare('SELECT customer AS runId, tenant FROM subscriptions WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
  },
  async handle(req, sim) {
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = req.headers['idempotency-key'];
    if (!key || key.length > 255) return { status: 400, body: '{"error":"key"}' };
    let b: Body;
    try {
      b = JSON.parse(req.body) as Body;
    } catch {
      return { status: 400, body: '{"error":"json"}' };
    }
    if (typeof b?.customer !== 'string' || typeof b?.plan !== 'string') return { status: 400, body: '{"error":"fields"}' };
    await sim.step('claim');
    const now = sim.now();
    type Claim = { status: number; id?: number } | { claimed: number };
    const c = sim.db.transaction((): Claim => {
      const row = sim.db.prepare('SELECT body, locked_at, sub_id FROM idem WHERE tenant = ? AND key = ?').get(tenant, key) as { body: string; locked_at: number; sub_id: number | null } | undefined;
      if (row && row.body !== req.body) return { status: 422 };
      if (row && row.sub_id !== null) return { status: 201, id: row.sub_id };
      if (row && now - row.locked_at < LEASE_MS) return { status: 409 };
      sim.db.prepare('INSERT INTO idem (tenant, key, body, locked_at) VALUES (?, ?, ?, ?) ON CONFLICT (tenant, key) DO UPDATE SET locked_at = excluded.locked_at').run(tenant, key, req.body, now);
      return { claimed: now };
    }).immediate();
    if ('status' in c) {
      if (c.status !== 201) return { status: c.status, body: '{}' };
      const s = sim.db.prepare('SELECT created_at FROM subscriptions WHERE id = ?').get(c.id) as { created_at: number };
      // The bug: the answer is rebuilt, stamped with this answer's time.
      return { status: 201, body: JSON.stringify({ id: c.id, created_at: s.created_at, served_at: sim.now() }) };
    }
    await sim.step('bill');
    sim.crashPoint('billing');
    await sim.step('finish');
    const body = sim.db.transaction(() => {
      const r = sim.db.prepare('UPDATE idem SET sub_id = -1 WHERE tenant = ? AND key = ? AND locked_at = ? AND sub_id IS NULL').run(tenant, key, c.claimed);
      if (r.changes !== 1) return null;
      const id = Number(sim.db.prepare('INSERT INTO subscriptions (tenant, customer, plan, created_at) VALUES (?, ?, ?, ?)').run(tenant, b.customer, b.plan, sim.now()).lastInsertRowid);
      sim.db.prepare('UPDATE idem SET sub_id = ? WHERE tenant = ? AND key = ?').run(id, tenant, key);
      return JSON.stringify({ id, created_at: sim.now(), served_at: sim.now() });
    }).immediate();
    if (body === null) return { status: 409, body: '{}' };
    return { status: 201, body };
  },
};

export default service;
