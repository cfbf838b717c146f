import { describe, expect, it } from 'vitest';
import { plural } from './noun.js';
import { matchesExpect, runScenario } from '../scenario/run.js';
import type { Scenario } from '../scenario/schema.js';
import type { ServiceDefinition } from './definition.js';

describe('a service noun in the plural, as its messages say it', () => {
  it('regular English plurals, the last word of several', () => {
    expect(['report', 'payment', 'effect', 'order'].map(plural)).toEqual(['reports', 'payments', 'effects', 'orders']);
    expect(['ledger entry', 'delivery', 'key'].map(plural)).toEqual(['ledger entries', 'deliveries', 'keys']);
    expect(['address', 'box', 'batch', 'wish'].map(plural)).toEqual(['addresses', 'boxes', 'batches', 'wishes']);
  });

  it("a violation says '2 ledger entries', not '2 ledger entrys'", async () => {
    // Ignores its key: two workers of one operation make two entries.
    const ledger: ServiceDefinition = {
      name: 'ledger',
      tables: ['entries'],
      setup: (db) => db.exec('CREATE TABLE entries (id INTEGER PRIMARY KEY, ref TEXT)'),
      steps: ['post'],
      operation: { path: '/entries', body: (op) => JSON.stringify({ ref: op.runId, memo: op.title }) },
      effects: { noun: 'ledger entry', of: (db, op) => db.prepare('SELECT id FROM entries WHERE ref = ?').pluck().all(op.runId) as number[] },
      async handle(req, sim) {
        await sim.step('post');
        const id = Number(sim.db.prepare('INSERT INTO entries (ref) VALUES (?)').run((JSON.parse(req.body) as { ref: string }).ref).lastInsertRowid);
        return { status: 201, body: JSON.stringify({ id }) };
      },
    };
    const s: Scenario = {
      format: 'retrysim.scenario/2', name: 'twins', description: '', seed: 0,
      service: { module: 'ledger.ts', instances: 1, leaseMs: 5000, allowUnsafeLease: true, clockOffsetMs: [] },
      client: { keySource: 'tool_call', policy: 'bug-report-harness', maxAttempts: 1, timeoutMs: 1000, model: { resubmits: 0, reword: false } },
      network: { latencyMeanMs: 1, latencySdMs: 0, loseResponses: 0 },
      faults: { loseResponseAfterCommit: 0, crashMidRequest: 0, slowMs: 0 },
      operations: [{ id: 'op1', runId: 'run-1', module: 'ledger entry', title: 'ledger entry 1', steps: '', workers: 2, startMs: 0, staggerMs: 0 }],
      schedule: [],
      expect: { violations: [] },
    };
    const r = await runScenario(s, { service: ledger });
    expect(r.violations.find((v) => v.invariant === 'exactly-one')?.detail).toBe('2 ledger entries (ids 1, 2) for one logical operation');
    // replay's "expect: NOT met" lines, in the same words.
    expect(matchesExpect({ ...s, expect: { reports: { op1: 3 }, violations: ['exactly-one'] } }, r, 'ledger entry').problems).toEqual(['operation op1: expected 3 ledger entries, got 2']);
    expect(matchesExpect({ ...s, expect: { reports: { op1: 1 }, violations: ['exactly-one'] } }, r, 'ledger entry').problems).toEqual(['operation op1: expected 1 ledger entry, got 2']);
  });
});
