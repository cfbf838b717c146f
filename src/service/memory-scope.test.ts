// A service's memory() is its process's start-up, and runs as that process
// on the kernel's clock (src/service/process-scope.ts). Until 2026-12 it ran
// outside every scope: its Date.now() and crypto.randomUUID() were the
// machine's, so `{ bootId: crypto.randomUUID() }` made every replay of the
// same file hash differently, and a setInterval armed there (a TTL eviction
// sweep) was a real timer — it swept on wall time, never at the virtual
// second a retry came back, and kept Node running after the run.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { runServiceCampaign } from './campaign.js';
import { releaseDatabase, simDatabase } from './db.js';
import type { ServiceDefinition } from './definition.js';
import { ServiceHost } from './host.js';
import ttlCache, { processes, SWEEP_MS, type Memory } from './fixtures/memory-ttl-cache.js';

const EPOCH = SIM_EPOCH_MS;

function scenario(o: { timeoutMs: number; maxAttempts?: number; policy?: string; instances?: number; clockOffsetMs?: number[]; faults?: Record<string, unknown>; workers?: number }) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'memory on the kernel clock', seed: 11,
    service: { module: ttlCache.name, instances: o.instances ?? 1, clockOffsetMs: o.clockOffsetMs ?? [], epochMs: EPOCH },
    client: { keySource: 'tool_call', timeoutMs: o.timeoutMs, maxAttempts: o.maxAttempts ?? 2, ...(o.policy ? { policy: o.policy } : {}) },
    faults: o.faults ?? {},
    operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: o.workers ?? 1 }],
    expect: {},
  }));
}

/** Runs `s` against `def`, with the memories its processes built (one per start). */
async function run(s: ReturnType<typeof scenario>, def: ServiceDefinition = ttlCache as ServiceDefinition) {
  const from = processes.length;
  const r = await runScenario(s, { service: def, keepTrace: true });
  return { r, procs: processes.slice(from) as Memory[] };
}

describe('memory() runs as its process, on the kernel clock', () => {
  it('reads the kernel clock (epoch plus the instance\'s skew) and a seeded stream of its own: the same seed gives the same trace', async () => {
    const s = scenario({ timeoutMs: 1000, instances: 2, clockOffsetMs: [0, -250], workers: 2 });
    const a = await run(s);
    const b = await run(s);
    expect(a.procs.map((m) => m.startedAt)).toEqual([EPOCH, EPOCH - 250]);
    expect(a.procs.map((m) => m.bootId)).toEqual(b.procs.map((m) => m.bootId));
    expect(new Set(a.procs.map((m) => m.bootId)).size).toBe(2); // each instance its own
    // The ids the orders carry (and the trace's answers) hold the boot id: one hash.
    expect(a.r.result.traceHash).not.toBe('');
    expect(a.r.result.traceHash).toBe(b.r.result.traceHash);
    expect(a.r.trace).toEqual(b.r.trace);
  });

  it('runs once per process start: again at the restart after a kill, with a new boot id and the restart\'s time', async () => {
    const { r, procs } = await run(scenario({ timeoutMs: 5000, maxAttempts: 6, policy: 'codex-sampling', faults: { slowMs: 3000, slowAtStep: 'answer', kill: { atMs: 1500, restartAfterMs: 200 } } }));
    expect(r.trace.some((l) => /\bs0\s+restart\b/.test(l)), r.trace.join('\n')).toBe(true);
    expect(procs).toHaveLength(2);
    expect(procs.map((m) => m.startedAt)).toEqual([EPOCH, EPOCH + 1700]);
    expect(procs[1]!.bootId).not.toBe(procs[0]!.bootId);
  });

  it('its eviction sweep fires on kernel time: a retry after the sweep is not deduped, one before it is', async () => {
    const slow = { slowMs: 3000, slowAtStep: 'answer' };
    // The key is claimed at 1 ms; the sweep at 1000 ms leaves it (999 ms old), the one at 2000 ms evicts it.
    const early = await run(scenario({ timeoutMs: 1000, faults: slow }));
    expect(early.r.violations).toEqual([]);
    expect(early.r.reports['op1']).toBe(1);
    expect(early.procs[0]!.sweeps.slice(0, 3)).toEqual([EPOCH + SWEEP_MS, EPOCH + 2 * SWEEP_MS, EPOCH + 3 * SWEEP_MS]);
    expect(early.procs[0]!.evicted[0]?.at).toBe(EPOCH + 2000);
    const late = await run(scenario({ timeoutMs: 2500, faults: slow }));
    expect(late.r.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
    expect(late.r.reports['op1']).toBe(2);
    expect(late.r.trace.some((l) => /s0\/memory\(\)\s+setInterval callback/.test(l))).toBe(true);
  });

  it('its timers wait out a pause of the process', async () => {
    const { procs } = await run(scenario({ timeoutMs: 5000, maxAttempts: 1, faults: { pause: { atStep: 'answer', ms: 3000, count: 1 } } }));
    const sweeps = procs[0]!.sweeps;
    // Frozen from the step at 1 ms to 3001 ms: the sweeps due at 1000 and 2000 ms come as one when it ends.
    expect(sweeps[0]).toBe(EPOCH + 3001);
    expect(procs[0]!.evicted[0]?.at).toBe(EPOCH + 3001);
  });

  it('its timers die with the process at a kill; the restarted process sweeps on its own timer', async () => {
    const { procs } = await run(scenario({ timeoutMs: 5000, maxAttempts: 6, policy: 'codex-sampling', faults: { slowMs: 3000, slowAtStep: 'answer', kill: { atMs: 1500, restartAfterMs: 200 } } }));
    expect(procs).toHaveLength(2);
    expect(procs[0]!.sweeps).toEqual([EPOCH + 1000]);
    expect(procs[1]!.sweeps[0]).toBe(EPOCH + 2700);
  });

  it('a timer armed in memory() that throws is an uncaught exception: the process crashes and starts again (memory() once more)', async () => {
    let starts = 0;
    const def: ServiceDefinition = {
      ...(ttlCache as ServiceDefinition),
      name: 'memory-timer-throws',
      memory: () => {
        const first = ++starts === 1;
        setTimeout(() => { // real-time: allowed (user code: a timer of the process, on the kernel's clock)
          if (first) throw new Error('warm-up failed');
        }, 300);
        return (ttlCache.memory as () => Memory)();
      },
    };
    const { r } = await run(scenario({ timeoutMs: 5000, faults: { slowMs: 1000, slowAtStep: 'answer' } }), def);
    expect(r.crashes).toEqual([{ instance: 's0', cause: expect.stringMatching(/^uncaught exception: Error: warm-up failed/) }]);
    expect(starts).toBe(2);
  });

  it('the recovery phase goes on with the same process: memory() is not run again, its sweep carries on', async () => {
    let starts = 0;
    const def: ServiceDefinition<Memory> = {
      ...(ttlCache as ServiceDefinition<Memory>),
      name: 'memory-with-recovery',
      memory: () => (starts++, (ttlCache.memory as () => Memory)()),
      progress: { settleMs: 100, leased: false, query: (op) => ({ path: `/orders/${op.runId}` }), found: (status) => status === 200 },
      async handle(req, sim) {
        if (req.method === 'GET') return { status: 404, body: '{}' };
        return ttlCache.handle(req, sim);
      },
    };
    // Every answer of the main run is a 503 from a gateway: the operation ends unknown, and recovery resubmits it.
    const s = scenario({ timeoutMs: 1000, maxAttempts: 1 });
    const withGateway = parseScenario(JSON.stringify({ ...JSON.parse(JSON.stringify(s)), network: { latencyMeanMs: 1, latencySdMs: 0, loseResponses: 0, answer: { status: 503, count: 1 } } }));
    const { r, procs } = await run(withGateway, def as ServiceDefinition);
    expect(r.recovery.size).toBe(1);
    expect(starts).toBe(1);
    expect(procs).toHaveLength(1);
    // The main run ended before its first sweep, which it still runs once its last task has ended (an interval's
    // last tick after a run, the process's as a request's: src/service/interval-last-tick.test.ts); the recovery
    // phase's clock goes on with it, due a period on, in the same memory, and gives it its own last tick.
    expect(r.trace.filter((l) => /^ +1000\.000 ms +s0\/memory\(\)\s+setInterval callback/.test(l))).toHaveLength(1);
    expect(r.recoveryTrace.filter((l) => /^ +2000\.000 ms +s0\/memory\(\)\s+setInterval callback/.test(l)), r.recoveryTrace.join('\n')).toHaveLength(1);
    expect(procs[0]!.sweeps).toEqual([EPOCH + SWEEP_MS, EPOCH + 2 * SWEEP_MS]);
  });

  it('a memory() that throws is one line naming it, and the next run starts on a clean clock', async () => {
    const def: ServiceDefinition = { ...(ttlCache as ServiceDefinition), name: 'memory-throws', memory: () => { throw new Error('no config'); } };
    await expect(run(scenario({ timeoutMs: 1000 }), def)).rejects.toThrow(/memory-throws.*memory\(\) threw Error: no config/);
    const { r } = await run(scenario({ timeoutMs: 1000 }));
    expect(r.violations).toEqual([]);
  });

  it('same seed, same campaign: the first failing run and the counterexample (ids holding the boot id) are the same', async () => {
    const go = () => runServiceCampaign({ def: ttlCache as ServiceDefinition, module: 'memory-ttl-cache', runs: 60, seed: 1, faults: ['slow', 'longSpans'] });
    const a = await go();
    const b = await go();
    expect(a.verdict).toBe('fails');
    expect(b.firstFailureRun).toBe(a.firstFailureRun);
    expect(b.counterexample!.violations).toEqual(a.counterexample!.violations);
    expect(a.counterexample!.violations[0]!.detail).toMatch(/2 orders \(ids '[0-9a-f-]{36}:1', '[0-9a-f-]{36}:2'\)/);
  }, 60_000);

  it('in real mode (serve) memory() is the machine\'s: it runs at once, on the real clock', () => {
    const def: ServiceDefinition<{ at: number }> = { ...(ttlCache as unknown as ServiceDefinition<{ at: number }>), name: 'memory-real', memory: () => ({ at: Date.now() }) }; // real-time: allowed (real mode reads the machine's clock)
    const sdb = simDatabase(def as ServiceDefinition);
    try {
      const before = Date.now(); // real-time: allowed (the test's own clock)
      const h = new ServiceHost(def as ServiceDefinition, sdb, 's0');
      expect((h.memory as { at: number }).at).toBeGreaterThanOrEqual(before);
    } finally {
      releaseDatabase(sdb);
    }
  });
});
