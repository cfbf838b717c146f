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
