import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../real/child.js';
import { tempDirs } from '../testing/temp-dirs.js';

// A promise rejection that a service's or hosted app's code leaves unhandled
// while serving a request. Node (--unhandled-rejections=throw, its default)
// crashes the process there; retrysim now does the same in simulation — the
// instance dies as after a kill (its requests unanswered, its memory lost)
// and restarts — and the campaign judges the invariants. Before: a hosted
// app's run stopped as "broken" (exit 2), and a service's unhandled
// rejection ended retrysim itself (exit 1, "did not reproduce", a stack).
//
// The canaries remember their answers in process memory and fire a webhook
// they never await after the order: only the crash loses the memory, so
// only a modelled crash makes the patient client's retry a second order.
// Through the CLI: in vitest's own process the rejections would be vitest's.

const tmp = tempDirs();
const SERVICE = 'src/service/fixtures/fire-and-forget.ts';
const APP = 'src/app/fixtures/fire-and-forget-app.ts';

/** One order and a client patient enough (uncapped backoff: its 3rd attempt comes 646 ms in) to outlast the 500 ms restart. */
function patientClient(module: string): string {
  const file = join(tmp('rs-unhandled-'), 'patient.json');
  writeFileSync(file, JSON.stringify({
    format: 'retrysim.scenario/2', name: 'patient client', seed: 1, service: { module, instances: 1 },
    client: { keySource: 'tool_call', policy: 'codex-sampling', maxAttempts: 3 },
    operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: { reports: { op1: 2 }, violations: ['exactly-one'] },
  }));
  return file;
}

const CRASHED = /process crashed: unhandled rejection: Error: webhook for order 1 refused \(at notify \([^)]*fire-and-forget(-app)?\.ts:\d+:\d+\)\)/;

describe('an unhandled rejection while serving a request crashes the process, as in Node', () => {
  it.each([['--service', SERVICE], ['--app', APP]])('%s: the trace names the crash, the process restarts without its memory, the retry makes a second order', async (flag, module) => {
    const r = await runCli(['replay', flag, module, patientClient(module), '--trace']);
    expect(r.code, r.stdout).toBe(0); // the file expects the second order
    expect(r.stdout).toMatch(CRASHED);
    expect(r.stdout).toMatch(/s0 +kill \{"inflight":1,"restartAfterMs":500\}/);
    expect(r.stdout).toMatch(/s0 +restart/);
    expect(r.stdout).toMatch(/orders held: op1=2/);
    expect(r.stdout).toMatch(/exactly-one \(op1\): 2 orders/);
  }, 60_000);

  it('check judges the invariants (exit 1, not 2), and the counterexample names the crash in the table and --json', async () => {
    const found = tmp('rs-unhandled-found-');
    const args = ['check', '--service', SERVICE, '--faults', 'longSpans', '--runs', '50', '--found', found];
    const [text, json] = await Promise.all([runCli(args), runCli([...args, '--json'])]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toMatch(/exactly-one \(op1\): 2 orders/);
    expect(text.stdout).toMatch(/process crashed \(s0\): unhandled rejection: Error: webhook for order 1 refused \(at notify \([^)]*fire-and-forget\.ts:\d+:\d+\)\)/);
    expect(json.code, json.stderr).toBe(1);
    const j = JSON.parse(json.stdout) as { verdict: string; violations: string[]; crashes: Array<{ instance: string; cause: string }> };
    expect(j.verdict).toBe('fails');
    expect(j.violations).toEqual(['exactly-one']);
    expect(j.crashes[0]).toMatchObject({ instance: 's0', cause: expect.stringMatching(/^unhandled rejection: Error: webhook for order 1 refused/) });
  }, 120_000);
  it('a timer callback that throws is an uncaught exception: the process crashes the same way (it stopped check with "internal error … a bug in retrysim")', async () => {
    const module = 'src/service/fixtures/timer-throws.ts';
    const file = join(tmp('rs-uncaught-'), 'patient.json');
    // Answers take 5 ms each way; the flush throws 1 ms after the order, while the handler still writes its audit line.
    writeFileSync(file, JSON.stringify({
      format: 'retrysim.scenario/2', name: 'patient client', seed: 1, service: { module, instances: 1 },
      client: { keySource: 'tool_call', policy: 'codex-sampling', maxAttempts: 3 }, network: { latencyMeanMs: 5, latencySdMs: 0 },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: { reports: { op1: 2 }, violations: ['exactly-one'] },
    }));
    const r = await runCli(['replay', '--service', module, file, '--trace']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/s0 +process crashed: uncaught exception: Error: metrics flush failed for order 1 \(at flushMetrics \([^)]*timer-throws\.ts:\d+:\d+\)\)/);
    expect(r.stdout).toMatch(/s0 +kill \{"inflight":1,"restartAfterMs":500\}/);
    expect(r.stdout).toMatch(/orders held: op1=2/);
    const c = await runCli(['check', '--service', module, '--runs', '30', '--found', tmp('rs-uncaught-found-')]);
    expect(c.stderr).not.toMatch(/internal error/);
    expect(c.code, c.stderr).toBe(1);
    expect(c.stdout).toMatch(/process crashed \(s0\): uncaught exception: Error: metrics flush failed/);
  }, 120_000);
});
