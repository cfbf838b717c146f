/**
 * A fault pinned to a step of a user's service: the file `check --service`
 * writes has only `service.module`, so the steps are known when the module
 * is loaded, not when the file is parsed. Such files used to crash the
 * loader (it looked up a built-in variant's step list, `undefined` for a
 * module) with "Cannot read properties of undefined (reading 'includes')".
 */
import { describe, expect, it } from 'vitest';
import { parseScenario, printScenario } from './load.js';
import { recordScenario } from './record.js';
import { runScenario } from './run.js';
import { loadService } from '../service/load.js';
import { ServiceError } from '../service/errors.js';
import { Trace } from '../sim/trace.js';

const MODULE = 'examples/payments-check-then-insert/service.ts';

const file = (faults: object): string => JSON.stringify({
  format: 'retrysim.scenario/2',
  name: 'pause-and-kill',
  seed: 7,
  service: { module: MODULE },
  client: { keySource: 'tool_call' },
  faults,
  operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2, staggerMs: 3 }],
  expect: {},
});

describe('faults at a user service\'s steps', () => {
  it('a file with faults.pause.atStep and faults.kill.atStep loads, runs and replays to the same trace', async () => {
    const def = await loadService(MODULE);
    const s = parseScenario(file({ pause: { atStep: 'charge', ms: 1200 }, kill: { atStep: 'check', restartAfterMs: 10 } }));
    const { scenario } = await recordScenario(s);
    const again = parseScenario(printScenario(scenario));
    const first = await runScenario(again, { service: def, strictReplay: true, keepTrace: true });
    const second = await runScenario(again, { service: def, strictReplay: true });
    expect(second.result.traceHash).toBe(first.result.traceHash);
    // Both faults fired: the kill, and the pause that let the twin charge too — a line of its own, not only a gap.
    expect(first.trace.some((l) => / kill /.test(l))).toBe(true);
    expect(first.trace.some((l) => /s0\/op1\.w\d#\d+ +paused 1200 ms at step 'charge'$/.test(l))).toBe(true);
    expect(first.reports.op1).toBe(2);
    expect(first.violations.map((v) => v.invariant)).toContain('exactly-one');
  });

  it('the trace speaks the service\'s words: no report, tool call, toolu_ or /reports; pauses and slow steps are lines', async () => {
    const def = await loadService(MODULE);
    const s = parseScenario(JSON.stringify({
      ...JSON.parse(file({ pause: { atStep: 'charge', ms: 1200 }, slowMs: 800, slowAtStep: 'check' })),
      // Every attempt lost: the client gives up with "outcome unknown", in its words.
      network: { loseResponses: 20 },
      client: { keySource: 'tool_call', maxAttempts: 2 },
    }));
    const r = await runScenario(s, { service: def, keepTrace: true });
    const text = r.trace.join('\n');
    expect(text).not.toMatch(/report|tool.?call|toolu_|\/reports/i);
    expect(text).toMatch(/result unknown .*outcome unknown: the effect may already exist; query before resubmitting \(ask the service\)/);
    expect(text).toMatch(/ slow 800 ms after 'check'$/m);
    expect(text).toMatch(/ paused 1200 ms at step 'charge'$/m);
    // The notes are shown, not hashed: adding one leaves a trace's hash as it was.
    const [a, b] = [new Trace(true), new Trace(true)];
    for (const t of [a, b]) t.add(1, 's0/op1.w0#1', 'check');
    b.note(1, 's0/op1.w0#1', "paused 1200 ms at step 'charge'");
    expect(b.lines()).toHaveLength(2);
    expect(b.hash()).toBe(a.hash());
  });

  it('a step the service does not declare is refused in one line naming the path, the step and the service\'s steps', async () => {
    const def = await loadService(MODULE);
    for (const [faults, path] of [
      [{ kill: { atStep: 'nowhere' } }, 'faults.kill.atStep'],
      [{ pause: { atStep: 'nowhere', ms: 5 } }, 'faults.pause.atStep'],
    ] as const) {
      const s = parseScenario(file(faults)); // parses: the module's steps are not known yet
      const e = await runScenario(s, { service: def }).then(() => undefined, (x: unknown) => x);
      expect(e).toBeInstanceOf(ServiceError);
      const msg = (e as Error).message;
      expect(msg).not.toContain('\n');
      expect(msg).toContain(`at ${path}: 'nowhere' is not a step of payments-check-then-insert (its steps: check, charge)`);
    }
  });
});
