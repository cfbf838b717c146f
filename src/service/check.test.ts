import { describe, expect, it } from 'vitest';
import type { ServiceDefinition } from './definition.js';
import { runScenario } from '../scenario/run.js';
import { parseScenario } from '../scenario/load.js';
import { SCENARIO_FORMAT } from '../scenario/schema.js';

/** Answers every request with an id nobody wrote: id-exists breaks on each attempt. */
const phantom: ServiceDefinition = {
  name: 'phantom-ids',
  tables: ['orders'],
  setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT NOT NULL, tenant TEXT NOT NULL)'),
  steps: ['write'],
  operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }) },
  effects: { noun: 'order', of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  async handle(_req, sim) {
    await sim.step('write');
    return { status: 201, body: '{"id":999}' };
  },
};

describe("a user service's violations name the worker whose attempt it was", () => {
  it('id-exists: two workers of one operation make the same call (call-1#1), so the worker is named', async () => {
    const s = parseScenario(JSON.stringify({
      format: SCENARIO_FORMAT, name: 'phantom', seed: 1, service: { module: 'phantom-ids' },
      client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 2000 },
      operations: [{ id: 'op1', runId: 'run-1', module: 'm', title: 't', steps: 's', workers: 2 }], expect: {},
    }));
    const r = await runScenario(s, { service: phantom });
    const details = r.violations.filter((v) => v.invariant === 'id-exists').map((v) => v.detail).sort();
    expect(details).toEqual([
      "op1.w0's attempt call-1#1 was given order id 999, which is not one of this operation's orders",
      "op1.w1's attempt call-1#1 was given order id 999, which is not one of this operation's orders",
    ]);
  });
});

describe('invariants 2 and 4 hold for the recovery phase too', () => {
  /** Keys claimed by the raw header, not scoped by tenant; a claim never expires (no lease needed: nothing here is killed mid-claim). */
  const unscoped: ServiceDefinition = {
    name: 'unscoped-keys',
    tables: ['transfers', 'claims'],
    setup: (db) => db.exec('CREATE TABLE transfers (id INTEGER PRIMARY KEY, ref TEXT, tenant TEXT); CREATE TABLE claims (k TEXT PRIMARY KEY, answer TEXT)'),
    steps: ['claim', 'move'],
    operation: { path: '/transfers', body: (op) => JSON.stringify({ ref: op.runId, note: op.title }) },
    effects: {
      noun: 'transfer',
      of: (db, op) => db.prepare('SELECT id FROM transfers WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[],
      owner: (db, id) => db.prepare('SELECT ref AS runId, tenant FROM transfers WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
    },
    progress: { settleMs: 1000, leased: false, query: (op) => ({ path: `/transfers/${op.runId}` }), found: () => false },
    async handle(req, sim) {
      if (req.method === 'GET') return { status: 404, body: '{}' };
      const tenant = req.headers['x-tenant'] ?? 'default';
      const k = req.headers['idempotency-key'] ?? '';
      await sim.step('claim');
      const row = sim.db.prepare('SELECT answer FROM claims WHERE k = ?').get(k) as { answer: string } | undefined;
      if (row) return { status: 201, body: row.answer };
      await sim.step('move');
      const id = Number(sim.db.prepare('INSERT INTO transfers (ref, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { ref: string }).ref, tenant).lastInsertRowid);
      const answer = JSON.stringify({ id });
      sim.db.prepare('INSERT INTO claims (k, answer) VALUES (?, ?)').run(k, answer);
      return { status: 201, body: answer };
    },
  };

  it("a resubmission answered with another tenant's stored result breaks tenant-isolation, not only progress", async () => {
    // Both tenants' first requests die in a kill (no answer reaches either); after the faults stop,
    // globex's resubmission makes transfer 1 and default's, with the same raw key, is handed it.
    const s = parseScenario(JSON.stringify({
      format: SCENARIO_FORMAT, name: 'leak in recovery', seed: 0,
      service: { module: 'unscoped-keys.ts', instances: 1, leaseMs: 5000, allowUnsafeLease: true, clockOffsetMs: [] },
      client: { keySource: 'tool_call', policy: 'bug-report-harness', maxAttempts: 1, timeoutMs: 100, model: { resubmits: 0, reword: false } },
      network: { latencyMeanMs: 1, latencySdMs: 0, loseResponses: 0 },
      faults: { loseResponseAfterCommit: 0, crashMidRequest: 0, slowMs: 0, kill: { instance: 0, atStep: 'move', restartAfterMs: 500 } },
      operations: [
        { id: 'op1', runId: 'run-1', module: 'transfer', title: 'transfer 1', steps: '', tenant: 'globex', workers: 1, startMs: 0, staggerMs: 0 },
        { id: 'op2', runId: 'run-1', module: 'transfer', title: 'transfer 1', steps: '', workers: 1, startMs: 0, staggerMs: 0 },
      ],
      expect: {},
    }));
    const r = await runScenario(s, { service: unscoped });
    expect(r.operations.every((op) => !op.results.some((x) => x.kind === 'success')), 'no success in the main run').toBe(true);
    const leak = r.violations.find((v) => v.invariant === 'tenant-isolation');
    expect(leak?.detail, JSON.stringify(r.violations)).toMatch(/^tenant '(globex|default)' received transfer \d+ of tenant '(globex|default)' \(its resubmission after the faults stopped\)$/);
    // Listed before progress: the counterexample is named after the breach.
    expect(r.violations.findIndex((v) => v.invariant === 'tenant-isolation')).toBeLessThan(r.violations.findIndex((v) => v.invariant === 'progress'));
  });
});
