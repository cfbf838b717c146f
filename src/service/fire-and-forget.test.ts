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
import { installKernelClock } from '../sim/fake-timers.js';
import '../sim/load-clock.js'; // as retrysim's import does: the machine's Date.now becomes a dispatcher
import { Kernel } from '../sim/kernel.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { runCli } from '../real/child.js';
import type { ServiceDb, ServiceDefinition } from './definition.js';
import { jobs } from './fixtures/fire-and-forget-jobs.js';

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

describe('work a handler fires and forgets runs on after the answer, on the kernel clock', () => {
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
