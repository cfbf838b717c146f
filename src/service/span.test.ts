import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { Reached } from './reached.js';
import type { ServiceDefinition } from './definition.js';

/** A prompt keyed write: answered within a few virtual ms. */
const prompt: ServiceDefinition = {
  name: 'prompt',
  tables: ['items'],
  setup: (db) => db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT, tenant TEXT)'),
  steps: ['write'],
  operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId }) },
  effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE run = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  async handle(req, sim) {
    await sim.step('write');
    const run = (JSON.parse(req.body) as { run: string }).run;
    const id = Number(sim.db.prepare('INSERT INTO items (run, tenant) VALUES (?, ?)').run(run, req.headers['x-tenant'] ?? 'default').lastInsertRowid);
    return { status: 201, body: JSON.stringify({ id }) };
  },
};

describe("coverage's virtual time span of a run", () => {
  it('ends at the run\'s last event, not at a request timeout left pending once the answer came', async () => {
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'span', seed: 1, service: { module: 'prompt' },
      client: { keySource: 'tool_call', timeoutMs: 2000 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }], expect: {},
    }));
    const reached = new Reached();
    const r = await runScenario(s, { service: prompt, keepTrace: true, reached });
    // The kernel's clock still runs on to the unused 2 s timeout (the recovery phase's start is unchanged)...
    expect(r.result.timeMs).toBe(2000);
    // ...but the run was over at 2 ms: answered, the client done.
    expect(r.result.lastEventMs).toBe(2);
    expect(r.trace.at(-1)).toMatch(/^\s*2\.000 ms/);
    expect([...reached.ids].filter((id) => id.startsWith('span:'))).toEqual(['span:1s']);
  });
});
