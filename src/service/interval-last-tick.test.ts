import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../real/child.js';
import { tempDirs } from '../testing/temp-dirs.js';

// An interval a request armed ticks once more after the run's last request:
// its work is the process's, as a one-shot timer's is. An outbox relay on a
// 50 ms setInterval used to stop before that tick, so one order answered
// 201 with no fault ended with no shipment (exactly-one: "told it
// succeeded, but no shipment exists") — a false alarm on a working relay.

const tmp = tempDirs();
const SERVICE = 'src/service/fixtures/outbox-interval.ts';

describe('an interval ticks once more after the run ends', () => {
  it('one order, no fault: the relay publishes it, one shipment, no violation', async () => {
    const file = join(tmp('rs-interval-'), 'one-order.json');
    writeFileSync(file, JSON.stringify({
      format: 'retrysim.scenario/2', name: 'one order', seed: 1, service: { module: SERVICE, instances: 1 },
      client: { keySource: 'tool_call', policy: 'codex-sampling', maxAttempts: 3 },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: { reports: { op1: 1 }, violations: [] },
    }));
    const r = await runCli(['replay', '--service', SERVICE, file, '--trace']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/setInterval callback/);
    expect(r.stdout).toMatch(/shipments held: op1=1/);
  }, 60_000);

  it('an interval the process arms in memory() — at boot, and again at a restart after the last request — ticks once more too: a correct relay holds', async () => {
    const relay = 'src/service/fixtures/outbox-memory-relay.ts';
    const file = join(tmp('rs-interval-'), 'one-order.json');
    writeFileSync(file, JSON.stringify({
      format: 'retrysim.scenario/2', name: 'one order', seed: 1, service: { module: relay, instances: 1 },
      client: { keySource: 'tool_call', policy: 'codex-sampling', maxAttempts: 3 },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: { reports: { op1: 1 }, violations: [] },
    }));
    const r = await runCli(['replay', '--service', relay, file, '--trace']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/s0\/memory\(\) +setInterval callback/);
    // The campaign, kills and restarts included (it failed at run 3, and once the boot relay ticked, at a kill restarting the process after the last request).
    const c = await runCli(['check', '--service', relay, '--runs', '400', '--found', tmp('rs-interval-'), '--json']);
    expect(c.code, c.stdout + c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({ verdict: 'holds' });
  }, 120_000);
});
