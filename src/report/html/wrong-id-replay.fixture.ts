/**
 * A service whose replay answers the wrong id: it stores the key with the
 * id it made and hands back the next one (an off-by-one in the replay's
 * read), an id that does not exist (id-exists). Its counterexample
 * (wrong-id-replay.fixture.json) loses the first three answers on the way
 * back — the first made the subscription, the next two are replays that
 * already carry the wrong id — so only the fourth, which carries the same
 * id, reaches the client.
 */
import type { ServiceDefinition } from '../../service/definition.js';

const service: ServiceDefinition = {
  name: 'subs',
  tables: ['subscriptions', 'idem'],
  setup(db) {
    db.exec(`CREATE TABLE subscriptions (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, customer TEXT NOT NULL);
             CREATE TABLE idem (tenant TEXT NOT NULL, key TEXT NOT NULL, sub_id INTEGER NOT NULL, PRIMARY KEY (tenant, key));`);
  },
  steps: ['claim', 'finish'],
  operation: { path: '/subscriptions', body: (op) => JSON.stringify({ customer: op.runId }) },
  effects: {
    noun: 'subscription',
    of: (db, op) => db.prepare('SELECT id FROM subscriptions WHERE customer = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    owner: (db, id) => db.prepare('SELECT customer AS runId, tenant FROM subscriptions WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
  },
  async handle(req, sim) {
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = req.headers['idempotency-key'];
    if (!key) return { status: 400, body: '{"error":"key"}' };
    const { customer } = JSON.parse(req.body) as { customer: string };
    await sim.step('claim');
    const done = sim.db.prepare('SELECT sub_id FROM idem WHERE tenant = ? AND key = ?').pluck().get(tenant, key) as number | undefined;
    // The bug: the replay answers the id after the stored one.
    if (done !== undefined) return { status: 201, body: JSON.stringify({ id: done + 1 }) };
    await sim.step('finish');
    const id = sim.db.transaction(() => {
      const made = Number(sim.db.prepare('INSERT INTO subscriptions (tenant, customer) VALUES (?, ?)').run(tenant, customer).lastInsertRowid);
      sim.db.prepare('INSERT INTO idem (tenant, key, sub_id) VALUES (?, ?, ?)').run(tenant, key, made);
      return made;
    }).immediate();
    return { status: 201, body: JSON.stringify({ id }) };
  },
};

export default service;
