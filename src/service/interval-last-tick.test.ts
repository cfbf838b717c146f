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
});
