/**
 * Rows a service's `setup` inserts (reference data: accounts, prices, a
 * feature flag) are the state every run starts from, as in production where
 * setup ran once on the database. The simulation emptied every declared
 * table before each run, so a handler reading them found nothing — a
 * transfer service debited no account, a price lookup answered 404 — and
 * real mode (a file that keeps them) disagreed with the simulation.
 */
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import type { ServiceDefinition } from './definition.js';
import { ServiceDatabase, simDatabase, releaseDatabase } from './db.js';

const shop: ServiceDefinition = {
  name: 'seeded-shop',
  tables: ['orders', 'prices', 'flags'],
  setup(db) {
    db.exec(`CREATE TABLE prices (sku TEXT PRIMARY KEY, cents INTEGER NOT NULL);
             CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, ref TEXT NOT NULL, tenant TEXT NOT NULL, cents INTEGER NOT NULL, doubled INTEGER GENERATED ALWAYS AS (cents * 2) VIRTUAL);
             CREATE TABLE flags (name TEXT NOT NULL, on_ INTEGER NOT NULL);
             INSERT INTO prices VALUES ('book', 1999), ('pen', 250);
             INSERT INTO flags VALUES ('orders', 1);
             INSERT INTO orders (ref, tenant, cents) VALUES ('seed', 'nobody', 1);`);
  },
  steps: ['price', 'write'],
  operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId, sku: 'book' }) },
  effects: { noun: 'order', of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  async handle(req, sim) {
    const { ref, sku } = JSON.parse(req.body) as { ref: string; sku: string };
    await sim.step('price');
    const cents = sim.db.prepare('SELECT cents FROM prices WHERE sku = ?').pluck().get(sku) as number | undefined;
    if (cents === undefined) return { status: 404, body: '{"error":"no such sku"}' };
    await sim.step('write');
    const id = Number(sim.db.prepare('INSERT INTO orders (ref, tenant, cents) VALUES (?, ?, ?)').run(ref, req.headers['x-tenant'] ?? 'default', cents).lastInsertRowid);
    // A price that changes per order: the next run must see the seed again, not this.
    sim.db.prepare('UPDATE prices SET cents = cents + 1 WHERE sku = ?').run(sku);
    return { status: 201, body: JSON.stringify({ id, cents }) };
  },
};

const scenario = parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'one order', seed: 1, service: { module: 'seeded-shop' }, client: { keySource: 'tool_call' },
  operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }], expect: {},
}));

describe('the rows setup inserts are every run\'s starting state', () => {
  it('a handler finds the seeded price in every run, each run from the seed (not from what the last run left)', async () => {
    for (let i = 0; i < 3; i++) {
      let seen: unknown[] = [];
      const r = await runScenario(scenario, { service: shop, keepTrace: true, inspect: (db) => (seen = db.prepare('SELECT cents FROM prices ORDER BY sku').pluck().all()) });
      expect(r.violations).toEqual([]);
      expect(r.reports.op1).toBe(1);
      expect(r.trace.join('\n')).toContain('answer 201 {"body":"{\\"id\\":2,\\"cents\\":1999}"}');
      expect(seen).toEqual([2000, 250]); // this run's own change on top of the seed
    }
  });

  it('reset restores every declared table to what setup left, AUTOINCREMENT counters included; a schema without seed rows is only emptied', () => {
    const d = simDatabase(shop);
    try {
      d.db.prepare("INSERT INTO orders (ref, tenant, cents) VALUES ('x', 'y', 5)").run();
      d.db.prepare('DELETE FROM flags').run();
      d.reset();
      expect(d.db.prepare('SELECT id, ref, cents, doubled FROM orders').raw().all()).toEqual([[1, 'seed', 1, 2]]);
      expect(d.db.prepare('SELECT name, on_ FROM flags').raw().all()).toEqual([['orders', 1]]);
      expect(Number(d.db.prepare("INSERT INTO orders (ref, tenant, cents) VALUES ('z', 'y', 5)").run().lastInsertRowid)).toBe(2);
    } finally {
      releaseDatabase(d);
    }
    const empty = new ServiceDatabase({ ...shop, name: 'no-seeds', tables: ['t'], setup: (db) => db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)') });
    empty.db.prepare('INSERT INTO t DEFAULT VALUES').run();
    empty.reset();
    expect(empty.db.prepare('SELECT count(*) FROM t').pluck().get()).toBe(0);
    empty.close();
  });
});
