import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { ServiceDefinition } from './definition.js';
import { runServiceCampaign } from './campaign.js';
import { runScenario } from '../scenario/run.js';

// A check-then-insert whose only gap between the check and the write is a
// yield (`await setImmediate()`, a short sleep: a log flush, a metrics call).
// The race is found; its timeline must show where each request let the other
// run, or a reader sees two requests answering new orders out of nowhere.
function gap(wait: () => Promise<unknown>, name: string): ServiceDefinition {
  return {
    name,
    tables: ['orders', 'keys'],
    setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT NOT NULL, tenant TEXT NOT NULL); CREATE TABLE keys (k TEXT PRIMARY KEY, resp TEXT NOT NULL)'),
    steps: ['enter'],
    operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }) },
    effects: {
      of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[],
      owner: (db, id) => db.prepare('SELECT ref AS runId, tenant FROM orders WHERE id = ?').get(id) as { runId: string; tenant: string } | undefined,
    },
    async handle(req, sim) {
      const tenant = req.headers['x-tenant'] ?? 'default';
      const key = `${tenant}|${req.headers['idempotency-key'] ?? ''}`;
      await sim.step('enter');
      const hit = sim.db.prepare('SELECT resp FROM keys WHERE k = ?').get(key) as { resp: string } | undefined;
      if (hit !== undefined) return { status: 201, body: hit.resp };
      await wait();
      const id = Number(sim.db.prepare('INSERT INTO orders (ref, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { ref: string }).ref, tenant).lastInsertRowid);
      const resp = JSON.stringify({ id });
      sim.db.prepare('INSERT OR REPLACE INTO keys (k, resp) VALUES (?, ?)').run(key, resp);
      return { status: 201, body: resp };
    },
  };
}

async function timelineOfFailure(def: ServiceDefinition): Promise<string> {
  const r = await runServiceCampaign({ def, runs: 200, seed: 1, faults: ['concurrency'], explore: 'exhaustive' });
  expect(r.verdict).toBe('fails');
  expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  const run = await runScenario(r.counterexample!.scenario, { service: def, keepTrace: true });
  return run.trace.join('\n');
}

describe("a handler awaiting a timer of its own: the timeline says so (shown, not hashed)", () => {
  it('await setImmediate() between the check and the write: each request waits for a timer due now before either answers', async () => {
    const t = await timelineOfFailure(gap(() => tick(), 'gap-immediate'));
    const waits = [...t.matchAll(/(s0\/op1\.w\d#\d) +awaits a timer of its own due now \(an immediate, a 0 ms timeout\): another task may run first/g)].map((m) => m[1]);
    expect(new Set(waits).size).toBe(2);
    // Both waited before the first answer: that is the race.
    expect(t.lastIndexOf('awaits a timer of its own')).toBeLessThan(t.indexOf('answer 201'));
  });

  it('await a 5 ms sleep: the line says when the timer is due', async () => {
    const t = await timelineOfFailure(gap(() => sleep(5), 'gap-sleep'));
    expect(t).toMatch(/s0\/op1\.w\d#\d +awaits a timer of its own, due in 5 ms/);
  });
});
