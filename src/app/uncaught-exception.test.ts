// A timer callback of a hosted app that throws is an uncaught exception:
// Node ends the process (exit code 1, the stack on stderr). retrysim now
// does the same in simulation — the instance dies as after a kill (its
// requests unanswered, its memory lost), restarts, and the run is judged —
// as it already did for an unhandled rejection. Before: fake-timers
// rethrew the callback's error out of the host's clock tick, and
// `retrysim check --app` stopped with "internal error: … (a bug in
// retrysim)", exit 1; the vitest helper with "could not minimise".
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { runServiceCampaign } from '../service/campaign.js';
import { appService } from './define.js';
import { timerThrowsApp } from './fixtures/timer-throws-app.js';

/** One order and a client patient enough (uncapped backoff: its 3rd attempt comes 646 ms in) to outlast the 500 ms restart. */
const patient = parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'patient client', seed: 1, service: { module: 'timer-throws-app', instances: 1 },
  client: { keySource: 'tool_call', policy: 'codex-sampling', maxAttempts: 3 },
  operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
}));

const CRASHED = /process crashed: uncaught exception: Error: metrics flush failed for order 1 \(at [^)]*timer-throws-app\.ts:\d+:\d+\)/;

describe('a timer callback of a hosted app that throws crashes its process, as in Node', () => {
  it('fired while the request is served: the answer never leaves, the process restarts without its memory, the retry makes a second order', async () => {
    const r = await runScenario(patient, { service: appService(timerThrowsApp(0)), keepTrace: true });
    const text = r.trace.join('\n');
    expect(text).toMatch(CRASHED);
    expect(text).toMatch(/s0 +restart/);
    expect(r.reports.op1).toBe(2);
    expect(r.violations.map((v) => v.invariant)).toContain('exactly-one');
  });

  it("fired after the answer left, in the process's timer task: the order stands, the crash is on the trace", async () => {
    const r = await runScenario(patient, { service: appService(timerThrowsApp(100)), keepTrace: true });
    const text = r.trace.join('\n');
    expect(text).toMatch(CRASHED);
    expect(r.reports.op1).toBe(1);
    expect(r.violations).toEqual([]);
  });

  it('a campaign judges the runs instead of stopping', async () => {
    const r = await runServiceCampaign({ def: appService(timerThrowsApp(0)), module: 'timer-throws-app', runs: 30, seed: 1, faults: ['loseResponse', 'concurrency'] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.crashes[0]).toMatchObject({ instance: 's0', cause: expect.stringMatching(/^uncaught exception: Error: metrics flush failed/) });
  }, 60_000);
});
