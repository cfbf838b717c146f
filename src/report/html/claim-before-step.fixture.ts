// Orders keyed by UUID, the key claimed in a transaction before the handler's first step; a replay answers the newest order of the ref in any tenant (the bug: not by key and tenant). For the stepper's story of a request that wrote before its first step.
import { randomUUID } from 'node:crypto'; // real-time: allowed (service code: seeded by the kernel clock)
import type { ServiceDefinition } from '../../service/definition.js';

const service: ServiceDefinition = {
  name: 'uuid-plain',
  tables: ['orders', 'idem'],
  setup(db) {
    db.exec(`CREATE TABLE orders (id TEXT PRIMARY KEY, tenant TEXT NOT NULL, ref TEXT NOT NULL, created INTEGER NOT NULL);
             CREATE TABLE idem (tenant TEXT NOT NULL, key TEXT NOT NULL, fp TEXT NOT NULL, PRIMARY KEY (tenant, key));`);
  },
  steps: ['pay'],
  operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId, note: op.title }) },
  effects: {
    noun: 'order',
    of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ? ORDER BY created, id').pluck().all(op.runId, op.tenant) as string[],
    owner: (db, id) => db.prepare('SELECT ref AS runId, tenant FROM orders WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
  },
  async handle(req, sim) {
    const key = req.headers['idempotency-key'];
    const tenant = req.headers['x-tenant'] ?? 'default';
    if (!key) return { status: 400, body: '{}' };
    const db = sim.db;
    const ref = (JSON.parse(req.body) as { ref: string }).ref;
    const claimed = db.transaction(() => {
      const seen = db.prepare('SELECT fp FROM idem WHERE tenant = ? AND key = ?').get(tenant, key) as { fp: string } | undefined;
      if (seen) return seen.fp === req.body ? 'replay' : 'reuse';
      db.prepare('INSERT INTO idem (tenant, key, fp) VALUES (?, ?, ?)').run(tenant, key, req.body);
      return 'new';
    }).immediate();
    if (claimed === 'reuse') return { status: 422, body: '{}' };
    if (claimed === 'replay') {
      // BUG: the newest order of this ref in ANY tenant
      const id = db.prepare('SELECT id FROM orders WHERE ref = ? ORDER BY created DESC LIMIT 1').pluck().get(ref) as string | undefined;
      return id ? { status: 201, body: JSON.stringify({ id }) } : { status: 409, body: '{"error":"in progress"}' };
    }
    await sim.step('pay');
    const id = randomUUID(); // real-time: allowed (service code: seeded by the kernel clock)
    db.prepare('INSERT INTO orders (id, tenant, ref, created) VALUES (?, ?, ?, ?)').run(id, tenant, ref, Date.now()); // real-time: allowed (service code: the kernel clock)
    return { status: 201, body: JSON.stringify({ id }) };
  },
};
export default service;
