/**
 * A service whose dedup is keyed on a hash of (tenant, body): the
 * Idempotency-Key is required but never read, so the key-reuse probe (the
 * same key, another body) is a new charge. For the stepper: the probe's
 * request is told as the probe, not as a retry, and key-reuse is pinned on
 * its answer (src/report/html/stepper-data.test.ts).
 */
import { createHash } from 'node:crypto';
import type { ServiceDefinition } from '../../service/definition.js';

const service: ServiceDefinition = {
  name: 'bodyhash-dedup',
  tables: ['charges', 'dedup'],
  setup(db) {
    db.exec(`CREATE TABLE charges (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL, item TEXT NOT NULL);
             CREATE TABLE dedup (h TEXT PRIMARY KEY, status TEXT NOT NULL, response TEXT);`);
  },
  steps: ['claim', 'charge'],
  crashPoints: ['after-claim'],
  operation: { path: '/charges', body: (op) => JSON.stringify({ order_id: op.runId, item: op.title }) },
  effects: {
    noun: 'charge',
    of: (db, op) => db.prepare('SELECT id FROM charges WHERE order_id = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    owner: (db, id) => db.prepare('SELECT order_id AS runId, tenant FROM charges WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
    total: (db) => db.prepare('SELECT count(*) FROM charges').pluck().get() as number,
  },
  async handle(req, sim) {
    const tenant: string = req.headers['x-tenant'] ?? 'default';
    if (!req.headers['idempotency-key']) return { status: 400, body: '{"error":"key required"}' };
    const b = JSON.parse(req.body) as { order_id: string; item: string };
    const h = createHash('sha256').update(tenant + '\n' + req.body).digest('hex');
    await sim.step('claim');
    const c = sim.db.transaction(() => {
      const row = sim.db.prepare('SELECT status, response FROM dedup WHERE h = ?').get(h) as { status: string; response: string | null } | undefined;
      if (row?.status === 'done') return { status: 201, body: row.response! };
      if (row) return { status: 409, body: '{"error":"in progress"}' };
      sim.db.prepare("INSERT INTO dedup (h, status) VALUES (?, 'in_progress')").run(h);
      return null;
    }).immediate();
    if (c) return c;
    try {
      await sim.step('charge');
      sim.crashPoint('after-claim');
    } catch (e) {
      sim.db.prepare("DELETE FROM dedup WHERE h = ? AND status = 'in_progress'").run(h);
      throw e;
    }
    const text = sim.db.transaction(() => {
      const id = Number(sim.db.prepare('INSERT INTO charges (tenant, order_id, item) VALUES (?, ?, ?)').run(tenant, b.order_id, b.item).lastInsertRowid);
      const t = JSON.stringify({ id });
      sim.db.prepare("UPDATE dedup SET status = 'done', response = ? WHERE h = ?").run(t, h);
      return t;
    }).immediate();
    return { status: 201, body: text };
  },
};
export default service;
