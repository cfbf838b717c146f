// The pause fault models a GC pause (SPEC §3): the whole process stalls, so
// its timers do not fire meanwhile. Until 2026-12 only the paused request
// stalled and a lease-renewal heartbeat (setInterval) kept beating through
// the pause, so the lease never expired under its frozen holder: a service
// without a fencing token — Kleppmann's lock bug — held against every pause
// (2,000 runs of `check --service --faults pause,concurrency,longSpans`).
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import type { ServiceDb, ServiceDefinition } from './definition.js';
import { heartbeatLease } from './fixtures/heartbeat-lease.js';
import { runServiceCampaign } from './campaign.js';

/** One charge, two workers; the first request pauses 10 s at its step (the lease is 2 s). */
function scenario(def: ServiceDefinition) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'gc pause', seed: 0, service: { module: def.name },
    client: { keySource: 'tool_call', maxAttempts: 2, timeoutMs: 2500 },
    network: { latencyMeanMs: 1, latencySdMs: 0 },
    faults: { pause: { atStep: 'charge', ms: 10_000 } },
    operations: [{ id: 'op1', runId: 'run-1', module: 'charge', title: 'charge 1', workers: 2 }], expect: {},
  }));
}

async function run(def: ServiceDefinition) {
  let beats: number[] = [];
  const r = await runScenario(scenario(def), { service: def, keepTrace: true, inspect: (db: ServiceDb) => { beats = db.prepare('SELECT at FROM beats ORDER BY id').pluck().all() as number[]; } });
  return { r, beats };
}

describe('a pause stalls its whole process: timers included', () => {
  it('no heartbeat beats while its request is paused; the lease expires, a retry takes the key over, and without fencing that is two charges', async () => {
    const { r, beats } = await run(heartbeatLease(false));
    const paused = r.trace.map((l) => /^\s*([\d.]+) ms\s+(\S+)\s+paused (\d+) ms/.exec(l)).find((m) => m !== null);
    expect(paused, r.trace.join('\n')).toBeDefined();
    const from = Number(paused![1]);
    const to = from + Number(paused![3]);
    // Date.now() is whole ms of the same kernel time: a beat strictly inside the pause is one that fired during it.
    expect(beats.filter((t) => t > from + 1 && t < to - 1), r.trace.join('\n')).toEqual([]);
    expect(r.violations.map((v) => v.invariant)).toContain('exactly-one');
  });

  it('with a fencing token the same schedule makes one charge', async () => {
    const { r } = await run(heartbeatLease(true));
    expect(r.violations, r.trace.join('\n')).toEqual([]);
  });

  it('a campaign finds the unfenced lease under pauses alone and holds for the fenced one', async () => {
    const faults = ['pause', 'concurrency', 'longSpans'] as const;
    const bad = await runServiceCampaign({ def: heartbeatLease(false), runs: 300, seed: 1, faults });
    expect(bad.verdict).toBe('fails');
    expect(bad.counterexample?.violations.map((v) => v.invariant)).toContain('exactly-one');
    const good = await runServiceCampaign({ def: heartbeatLease(true), runs: 300, seed: 1, faults });
    expect(good.verdict).toBe('holds');
  }, 120_000);
});
