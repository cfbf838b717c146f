import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from './campaign.js';
import type { ServiceDefinition } from './definition.js';

/**
 * A lookup scoped per tenant (WHERE tenant = ? AND key = ?) over a key table
 * whose PRIMARY KEY is the raw key alone, claimed with INSERT OR IGNORE:
 * when two tenants send one raw key, the second tenant's claim is silently
 * dropped, its charge goes through, and its *retry* finds nothing and charges
 * again. Two tenants whose first attempts both succeed show nothing; the bug
 * needs the second tenant to retry. `pk` is the table's primary key.
 */
function charges(pk: string): ServiceDefinition {
  return {
    name: 'charges-tenant-pk',
    tables: ['charges', 'idem'],
    setup: (db) => db.exec(`
      CREATE TABLE charges (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL, order_id TEXT NOT NULL);
      CREATE TABLE idem (key TEXT NOT NULL, tenant TEXT NOT NULL, status TEXT NOT NULL, response TEXT, PRIMARY KEY (${pk}));
    `),
    steps: ['claim', 'charge'],
    operation: { path: '/charges', body: (op) => JSON.stringify({ order_id: op.runId, item: op.title }) },
    effects: {
      noun: 'charge',
      of: (db, op) => db.prepare('SELECT id FROM charges WHERE order_id = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
    },
    async handle(req, sim) {
      const tenant = req.headers['x-tenant'] ?? 'default';
      const key = req.headers['idempotency-key']!;
      const orderId = (JSON.parse(req.body) as { order_id: string }).order_id;
      await sim.step('claim');
      const found = sim.db.transaction(() => {
        const row = sim.db.prepare('SELECT status, response FROM idem WHERE tenant = ? AND key = ?').get(tenant, key) as { status: string; response: string | null } | undefined;
        if (row === undefined) {
          sim.db.prepare("INSERT OR IGNORE INTO idem (key, tenant, status) VALUES (?, ?, 'pending')").run(key, tenant);
          return null;
        }
        return row.status === 'done' ? { status: 201, body: row.response! } : { status: 409, body: '{"error":"in progress"}' };
      }).immediate();
      if (found) return found;
      await sim.step('charge');
      const body = sim.db.transaction(() => {
        const id = Number(sim.db.prepare('INSERT INTO charges (tenant, order_id) VALUES (?, ?)').run(tenant, orderId).lastInsertRowid);
        const text = JSON.stringify({ id });
        sim.db.prepare("UPDATE idem SET status = 'done', response = ? WHERE tenant = ? AND key = ?").run(text, tenant, key);
        return text;
      }).immediate();
      return { status: 201, body };
    },
  };
}

describe('--explore exhaustive: two tenants with one raw key, each retrying', () => {
  it('fails a key table that drops the second tenant\'s claim (it held, with "two tenants sending one raw key" reached)', async () => {
    const r = await runServiceCampaign({ def: charges('key'), module: 'charges-tenant-pk', runs: 2000, seed: 1, faults: ['tenants', 'loseResponse'], explore: 'exhaustive' });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
    const s = r.counterexample!.scenario;
    expect(new Set(s.operations.map((o) => o.tenant ?? 'default')).size).toBe(2);
  }, 60_000);

  it('holds for the same service keyed by (tenant, key)', async () => {
    const r = await runServiceCampaign({ def: charges('tenant, key'), module: 'charges-tenant-pk', runs: 2000, seed: 1, faults: ['tenants', 'loseResponse'], explore: 'exhaustive' });
    expect(r.verdict).toBe('holds');
  }, 60_000);
});
