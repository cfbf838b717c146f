import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { runServiceCampaign } from './campaign.js';
import type { ServiceDefinition, ServiceSim } from './definition.js';

/**
 * A service whose own retry helper catches what its audit hook throws and
 * runs the booking's INSERT again: the crash fault at `audit-hook` makes a
 * second booking, and the handler answers 201 as if nothing happened. Without
 * a line where the crash strikes, the trace of that counterexample ("1 fault")
 * shows no fault at all, only a second `book` 20 ms later.
 */
async function withRetries<T>(sim: ServiceSim, fn: () => Promise<T>): Promise<T> {
  let last: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await fn();
    } catch (e) {
      last = e;
      await sim.sleep(20);
    }
  }
  throw last;
}

const swallowing: ServiceDefinition = {
  name: 'bookings-inner-retry',
  tables: ['bookings'],
  setup: (db) => db.exec('CREATE TABLE bookings (id INTEGER PRIMARY KEY, ref TEXT, tenant TEXT)'),
  steps: ['book', 'audit'],
  crashPoints: ['audit-hook'],
  operation: { path: '/bookings', body: (op) => JSON.stringify({ ref: op.runId }) },
  effects: { noun: 'booking', of: (db, op) => db.prepare('SELECT id FROM bookings WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
  async handle(req, sim) {
    const ref = (JSON.parse(req.body) as { ref: string }).ref;
    const id = await withRetries(sim, async () => {
      await sim.step('book');
      const n = Number(sim.db.prepare('INSERT INTO bookings (ref, tenant) VALUES (?, ?)').run(ref, req.headers['x-tenant'] ?? 'default').lastInsertRowid);
      await sim.step('audit');
      sim.crashPoint('audit-hook');
      return n;
    });
    return { status: 201, body: JSON.stringify({ id }) };
  },
};

const scenario = (faults: Record<string, unknown>) => parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'crash-swallowed', seed: 1, service: { module: 'bookings-inner-retry' },
  client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 10_000 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
  faults, operations: [{ id: 'op1', runId: 'r1', module: 'booking', title: 't' }], expect: {},
}));

describe('the crash fault at a service\'s crash point is on the trace where it strikes', () => {
  it('at its first reach, when the handler catches it and goes on to answer 201', async () => {
    const r = await runScenario(scenario({ crashMidRequest: 1, crashAt: 'audit-hook' }), { service: swallowing, keepTrace: true });
    expect(r.reports.op1).toBe(2);
    const trace = r.trace.map(String);
    const at = trace.findIndex((l) => /s0\/op1\.w0#1\s+crash at 'audit-hook'$/.test(l));
    expect(at).toBeGreaterThan(-1);
    // Between the step it follows and the retry it causes, where a reader looks for it.
    const audit = trace.findIndex((l) => /#1\s+audit$/.test(l));
    const rebook = trace.findIndex((l, i) => i > audit && /#1\s+book$/.test(l));
    expect(audit).toBeLessThan(at);
    expect(at).toBeLessThan(rebook);
  });

  it('is shown, not hashed: the run has the trace hash it had before the line was added', async () => {
    const a = await runScenario(scenario({ crashMidRequest: 1, crashAt: 'audit-hook' }), { service: swallowing, keepTrace: true });
    // Measured on the commit before the line existed: a hashed note would change it, and every recorded file's replay with it.
    expect(a.result.traceHash).toBe('73d3ad7220d88b47db23052bbf994899a6ead4dceb6413a854fd2eb8aff07e50');
  });

  it('the campaign\'s counterexample (1 op, 1 worker, 1 fault) shows its one fault', async () => {
    const r = await runServiceCampaign({ def: swallowing, module: 'bookings-inner-retry', runs: 100, seed: 1, faults: ['crash'] });
    expect(r.verdict).toBe('fails');
    const s = r.counterexample!.scenario;
    expect(s.faults.crashAt).toBe('audit-hook');
    const run = await runScenario(s, { service: swallowing, keepTrace: true });
    expect(run.trace.map(String).join('\n')).toContain("crash at 'audit-hook'");
  }, 60_000);
});
