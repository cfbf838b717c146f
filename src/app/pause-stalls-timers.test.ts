// The pause fault is a GC pause: the whole process stalls, its timers too
// (as for a service since a7220b2). A hosted app's timers fire when one of
// its requests moves the instance's clock on; until 2026-12 a retry that
// reached the paused process did so, and the holder's lock-renewal
// heartbeat beat during the pause: the lock never expired under its frozen
// holder, and an app without a fencing token made one order where Node
// makes two.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { appService } from './define.js';
import { lockHeartbeatApp } from './fixtures/lock-heartbeat-app.js';

/** One order, one worker: its first request pauses 10 s at its INCR; its retries (at 1.7, 2.1, 2.9 and 4.6 s: each within 2 s of the one before) reach the same process. */
const paused = parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'gc pause', seed: 1, service: { module: 'lock-heartbeat-app', instances: 1 },
  client: { keySource: 'tool_call', policy: 'codex-sampling', maxAttempts: 5, timeoutMs: 1500 },
  network: { latencyMeanMs: 1, latencySdMs: 0 },
  faults: { pause: { atStep: 'kv.incr', ms: 10_000 } },
  operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
}));

describe("a pause stalls a hosted app's whole process: its timers included", () => {
  it('no heartbeat renews the lock during the pause: a retry takes the expired lock, and without fencing that is two orders', async () => {
    const r = await runScenario(paused, { service: appService(lockHeartbeatApp), keepTrace: true });
    const text = r.trace.join('\n');
    const at = /^\s*([\d.]+) ms\s+\S+\s+paused (\d+) ms/m.exec(text);
    expect(at, text).not.toBeNull();
    const from = Number(at![1]);
    const to = from + Number(at![2]);
    const beats = r.trace.map((l) => /^\s*([\d.]+) ms\s+\S+\s+setInterval callback of the app/.exec(l)).filter((m) => m !== null).map((m) => Number(m![1]));
    expect(beats.filter((t) => t > from && t < to), text).toEqual([]);
    expect(r.reports.op1, text).toBe(2);
    expect(r.violations.map((v) => v.invariant)).toContain('exactly-one');
  });
});
