// Work a handler fires and forgets — `void render(job)` that awaits a queue
// slot, reads the clock, awaits the rendering, then writes — runs on after
// the answer, resumed by timers that fire as kernel events. Found by an
// outside user's 202 service (2026-12): the code after the first await ran
// outside every clock scope, where `Date.now()` overflowed the stack (the
// dispatcher and the machine's Date asked each other), the rejection was
// dropped, and the second sleep — armed once every task had ended — stopped
// with the run, so the export was never written and a correct service
// failed `exactly-one` with no fault at all.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { installKernelClock, LATE_CHAIN_MAX } from '../sim/fake-timers.js';
import '../sim/load-clock.js'; // as retrysim's import does: the machine's Date.now becomes a dispatcher
import { Kernel } from '../sim/kernel.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { runCli } from '../real/child.js';
import type { ServiceDb, ServiceDefinition } from './definition.js';
import { jobs } from './fixtures/fire-and-forget-jobs.js';
import { setTimeout as sleep } from 'node:timers/promises'; // real-time: allowed (virtual time in the simulation)

const EPOCH = SIM_EPOCH_MS;

function scenario(def: ServiceDefinition) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'fire and forget', seed: 5, service: { module: def.name, epochMs: EPOCH },
    client: { keySource: 'tool_call', timeoutMs: 5_000 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
    operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], faults: {}, expect: {},
  }));
}

async function run(def: ServiceDefinition) {
  let rows: Array<{ job: number; started: number; took: number; token: string }> = [];
  const r = await runScenario(scenario(def), { service: def, keepTrace: true, inspect: (db: ServiceDb) => { rows = db.prepare('SELECT job, started, took, token FROM exports').all() as typeof rows; } });
  return { r, rows };
}

/** Emits an audit event whose listener awaits 5 ms and writes a row, then keeps working (a 50 ms sleep) before it answers. */
const busy: ServiceDefinition = {
  name: 'busy-audit',
  tables: ['orders', 'audit'],
  setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT); CREATE TABLE audit (id INTEGER, at INTEGER, nonce REAL)'),
  steps: ['write'],
  operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }) },
  effects: { of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ?').pluck().all(op.runId) as number[] },
  async handle(req, sim) {
    await sim.step('write');
    const id = Number(sim.db.prepare('INSERT INTO orders (ref) VALUES (?)').run((JSON.parse(req.body) as { ref: string }).ref).lastInsertRowid);
    void (async () => {
      await sleep(5);
      sim.db.prepare('INSERT INTO audit VALUES (?, ?, ?)').run(id, Date.now(), Math.random()); // real-time: allowed (virtual: what is under test)
    })();
    await sim.sleep(50);
    return { status: 201, body: JSON.stringify({ id }) };
  },
};

describe('work a handler fires and forgets runs on after the answer, on the kernel clock', () => {
  it('while the handler is still at work (blocked in sim.sleep), it reads the request\'s clock and stream, the same in two runs (it read the machine\'s)', async () => {
    const rows: Array<Array<{ id: number; at: number; nonce: number }>> = [];
    for (let i = 0; i < 2; i++) {
      await runScenario(scenario(busy), { service: busy, inspect: (db: ServiceDb) => void rows.push(db.prepare('SELECT id, at, nonce FROM audit').all() as Array<{ id: number; at: number; nonce: number }>) });
    }
    expect(rows[0]).toHaveLength(1);
    // Its timer fires at 6 ms, while the handler sleeps to 51 ms: the code it resumes runs at the next task's turn, which is
    // the handler's own wake-up (nothing else runs meanwhile), before the handler's code does.
    expect(rows[0]![0]!.at).toBe(EPOCH + 51);
    expect(rows[1]).toEqual(rows[0]);
  });

  it('finishes after two sleeps, reading virtual time and the seeded stream: a correct 202 service holds, and two runs agree', async () => {
    const a = await run(jobs());
    expect(a.r.violations).toEqual([]);
    expect(a.r.reports).toEqual({ op1: 1 });
    // Accepted at 1 ms; the slot's 20 ms end at 21 ms; the rendering takes 30 ms of virtual time.
    expect(a.rows.map((x) => [x.started, x.took])).toEqual([[EPOCH + 21, 30]]);
    const b = await run(jobs());
    expect(b.rows).toEqual(a.rows);
    expect(b.r.result.traceHash).toBe(a.r.result.traceHash);
  });

  it('a chain longer than LATE_CHAIN_MAX is cut, and the trace says so (a job of 40 awaits came out "no export exists" with nothing said; 40 now finish)', async () => {
    const chain = (links: number): ServiceDefinition => {
      const base = jobs();
      return {
        ...base,
        name: `jobs-chain-${links}`,
        async handle(req, sim) {
          await sim.step('accept');
          const job = Number(sim.db.prepare('INSERT INTO jobs (k, body) VALUES (?, ?)').run(`${Math.random()}`, req.body).lastInsertRowid); // real-time: allowed (seeded)
          void (async () => {
            for (let i = 0; i < links; i++) await sleep(5);
            sim.db.prepare('INSERT INTO exports (job, ref, started, took, token) VALUES (?, ?, 0, 0, ?)').run(job, (JSON.parse(req.body) as { ref: string }).ref, '');
          })();
          return { status: 202, body: JSON.stringify({ job }) };
        },
      };
    };
    const ok = await run(chain(40));
    expect(ok.r.violations).toEqual([]);
    const cut = await run(chain(LATE_CHAIN_MAX + 10));
    expect(cut.rows).toEqual([]);
    expect(cut.r.trace.join('\n')).toMatch(new RegExp(`timer chain stopped with the run after ${LATE_CHAIN_MAX} timers`));
  });

  it('what it leaves unhandled crashes its process, as Node does (it was dropped)', async () => {
    const { r, rows } = await run(jobs(true));
    expect(rows).toEqual([]);
    expect(r.trace.join('\n')).toMatch(/renderer out of memory/);
  });

  it('check on a correct 202 service with fire-and-forget work: no false alarm', async () => {
    const c = await runCli(['check', '--service', 'src/service/fixtures/fire-and-forget-jobs.ts', '--runs', '150', '--faults', 'loseResponse,concurrency,slow,pause', '--json']);
    expect(c.code, c.stdout + c.stderr).toBe(0);
  }, 120_000);

  it('outside every scope, with a run\'s clock installed, Date.now() is the machine\'s (it overflowed the stack)', () => {
    const clock = installKernelClock(new Kernel({ seed: 1 }), EPOCH);
    try {
      expect(Date.now()).toBeGreaterThan(1.7e12); // real-time: allowed (host code outside every scope reads the machine)
    } finally {
      clock.release();
    }
  });
});
