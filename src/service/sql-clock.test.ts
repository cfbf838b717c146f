import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { runServiceCampaign } from './campaign.js';
import { ServiceDatabase } from './db.js';
import type { ServiceDefinition } from './definition.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';

const tmp = tempDirs();

/** What a handler saw, in JS and in SQL, at the same instant. */
const seen: Array<{ jsNow: number; sqlMs: number; current: string; datetime: string; strftime: string; julian: number; minus: string }> = [];

/** Keys honoured for 10 s, the TTL kept in SQL: `unixepoch()` writes and reads it. */
const sqlTtl: ServiceDefinition = {
  name: 'sql-ttl',
  tables: ['payments', 'keys'],
  setup: (db) => db.exec(`
    CREATE TABLE payments (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT, created_at TEXT DEFAULT CURRENT_TIMESTAMP);
    CREATE TABLE keys (key TEXT PRIMARY KEY, answer TEXT, expires_at INTEGER)`),
  steps: ['charge'],
  operation: { path: '/payments', body: (op) => JSON.stringify({ run: op.runId }) },
  effects: {
    noun: 'payment',
    of: (db, op) => db.prepare('SELECT id FROM payments WHERE run = ? AND tenant = ? ORDER BY id').pluck().all(op.runId, op.tenant) as number[],
  },
  async handle(req, sim) {
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = JSON.stringify([tenant, req.headers['idempotency-key']]);
    await sim.step('charge');
    seen.push({
      jsNow: Date.now(), // real-time: allowed (the reading under test, virtual in a run)
      sqlMs: sim.db.prepare("SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER)").pluck().get() as number,
      current: sim.db.prepare('SELECT CURRENT_TIMESTAMP').pluck().get() as string,
      datetime: sim.db.prepare("SELECT datetime('now')").pluck().get() as string,
      strftime: sim.db.prepare("SELECT strftime('%Y-%m-%d %H:%M:%f')").pluck().get() as string,
      julian: sim.db.prepare('SELECT julianday()').pluck().get() as number,
      minus: sim.db.prepare("SELECT datetime('now', '-1 day')").pluck().get() as string,
    });
    return sim.db.transaction(() => {
      const hit = sim.db.prepare('SELECT answer FROM keys WHERE key = ? AND expires_at > unixepoch()').pluck().get(key) as string | undefined;
      if (hit !== undefined) return { status: 201, body: hit };
      const id = Number(sim.db.prepare('INSERT INTO payments (run, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { run: string }).run, tenant).lastInsertRowid);
      const answer = JSON.stringify({ id });
      sim.db.prepare("INSERT OR REPLACE INTO keys (key, answer, expires_at) VALUES (?, ?, unixepoch('now', '+10 seconds'))").run(key, answer);
      return { status: 201, body: answer };
    })();
  },
};

const scenario = (extra: Record<string, unknown> = {}) => parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'sql-now', seed: 4, service: { module: 'sql-ttl', ...extra },
  client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }], expect: {},
}));

describe("SQLite's 'now' is the simulated clock in a simulated run", () => {
  it("unixepoch, CURRENT_TIMESTAMP, datetime('now'), strftime and julianday read the request's Date.now(), modifiers included", async () => {
    seen.length = 0;
    await runScenario(scenario({ clockOffsetMs: [90_000] }), { service: sqlTtl });
    expect(seen.length).toBeGreaterThan(0);
    for (const x of seen) {
      expect(x.jsNow).toBeLessThan(3_600_000); // virtual: the run started at 0
      expect(Math.abs(x.sqlMs - x.jsNow)).toBeLessThanOrEqual(1);
      const iso = new Date(x.jsNow).toISOString().replace('T', ' ');
      expect(x.datetime).toBe(iso.slice(0, 19));
      expect(x.current).toBe(iso.slice(0, 19));
      expect(x.strftime.slice(0, 19)).toBe(iso.slice(0, 19));
      expect(x.julian).toBeCloseTo(2440587.5 + x.jsNow / 86_400_000, 6);
      expect(x.minus).toBe(new Date(x.jsNow - 86_400_000).toISOString().replace('T', ' ').slice(0, 19));
    }
    // The same scenario reads the same values.
    const first = seen.splice(0);
    await runScenario(scenario({ clockOffsetMs: [90_000] }), { service: sqlTtl });
    expect(seen).toEqual(first);
  });

  it("on a file's epoch (service.epochMs: 2026-01-01) SQLite's 'now' is the request's Date.now() too, skew included", async () => {
    seen.length = 0;
    await runScenario(scenario({ epochMs: SIM_EPOCH_MS, instances: 2, clockOffsetMs: [0, -90_000] }), { service: sqlTtl });
    expect(seen.length).toBeGreaterThan(0);
    for (const x of seen) {
      expect(x.jsNow).toBeGreaterThanOrEqual(SIM_EPOCH_MS - 90_000);
      expect(x.jsNow).toBeLessThan(SIM_EPOCH_MS + 3_600_000);
      expect(Math.abs(x.sqlMs - x.jsNow)).toBeLessThanOrEqual(1);
      const iso = new Date(x.jsNow).toISOString().replace('T', ' ');
      expect(x.current).toBe(iso.slice(0, 19));
      expect(x.julian).toBeCloseTo(2440587.5 + x.jsNow / 86_400_000, 6);
    }
    // Instance s1's clock is 90 s behind: its requests see 2025-12-31 23:58:30 and after.
    const behind = seen.filter((x) => x.jsNow < SIM_EPOCH_MS);
    expect(behind.length).toBeGreaterThan(0);
    for (const x of behind) expect(x.current.startsWith('2025-12-31 23:5')).toBe(true);
  });

  it('a TTL kept in SQL expires in virtual time: a retry after a pause longer than 10 s is charged again (found by check)', async () => {
    const r = await runServiceCampaign({ def: sqlTtl, module: 'sql-ttl', runs: 2000, seed: 1, faults: ['loseResponse', 'pause', 'longSpans'] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 120_000);

  it("real mode's database file keeps SQLite's own clock; a simulation database reads the last run's time between runs, on its epoch", async () => {
    const file = join(tmp('rs-sql-clock-'), 'real.db');
    const real = new ServiceDatabase(sqlTtl, file);
    const sim = new ServiceDatabase(sqlTtl, ':memory:');
    const E = SIM_EPOCH_MS / 1000;
    try {
      expect(real.db.prepare('SELECT unixepoch()').pluck().get() as number).toBeGreaterThan(1.7e9); // real-time: allowed (what is asserted)
      await runScenario(scenario({ epochMs: SIM_EPOCH_MS }), { service: sqlTtl });
      const after2026 = sim.db.prepare('SELECT unixepoch()').pluck().get() as number;
      expect(after2026).toBeGreaterThanOrEqual(E);
      expect(after2026).toBeLessThan(E + 3600);
      await runScenario(scenario(), { service: sqlTtl });
      expect(sim.db.prepare('SELECT unixepoch()').pluck().get() as number).toBeLessThan(100_000);
    } finally {
      real.close();
      sim.close();
    }
  });
});
