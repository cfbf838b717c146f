import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cachedPayments as payments } from '../real/fixtures/memory-answer-cache.js';
import { runServiceCampaign } from './campaign.js';
import { runScenario } from '../scenario/run.js';
import { parseScenario } from '../scenario/load.js';
import { SCENARIO_FORMAT } from '../scenario/schema.js';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('kill.atAnswer: a restart after the work and before the answer leaves', () => {
  it('finds an in-process answer cache under --faults kill (no kill at a step can), minimised to one operation and one fault', async () => {
    const dir = tmp('rs-kill-answer-');
    const r = await runServiceCampaign({ def: payments(false), module: 'cached-payments', runs: 300, seed: 1, faults: ['kill'], foundDir: dir });
    expect(r.verdict).toBe('fails');
    const c = r.counterexample!;
    expect(c.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(c.scenario.faults.kill).toMatchObject({ atAnswer: 1 });
    expect(c.scenario.operations).toHaveLength(1);
    const exhaustive = await runServiceCampaign({ def: payments(false), module: 'cached-payments', runs: 1000, seed: 1, faults: ['kill'], explore: 'exhaustive' });
    expect(exhaustive.verdict).toBe('fails');
  });

  it('the same service with its answers in the database holds, and its coverage table shows the kill as an answer left', async () => {
    const r = await runServiceCampaign({ def: payments(true), module: 'cached-payments', runs: 300, seed: 1, faults: ['kill'] });
    expect(r.verdict).toBe('holds');
    const row = r.coverage!.rows.find((x) => x.id === 'kill@answer');
    expect(row?.what).toBe('a kill as an answer leaves (work done, never answered)');
    expect(row!.runs).toBeGreaterThan(0);
    const ex = await runServiceCampaign({ def: payments(true), module: 'cached-payments', runs: 1000, seed: 1, faults: ['kill'], explore: 'exhaustive' });
    expect(ex.verdict).toBe('holds');
    expect(ex.coverage!.rows.find((x) => x.id === 'kill@answer')!.runs).toBeGreaterThan(0);
  });

  it('a file: the answer is written and never leaves, the client sees the connection close, the instance restarts without its memory', async () => {
    const s = parseScenario(JSON.stringify({
      format: SCENARIO_FORMAT, name: 'kill at answer 1', seed: 1,
      service: { module: 'cached-payments' },
      client: { keySource: 'tool_call', maxAttempts: 2, timeoutMs: 2000 },
      faults: { kill: { atAnswer: 1, restartAfterMs: 5 } },
      operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay', steps: 'pay' }],
      expect: {},
    }));
    const run = await runScenario(s, { service: payments(false), keepTrace: true });
    const trace = run.trace.join("\n");
    expect(trace).toMatch(/#1 +answer 201[^\n]*\n[^\n]*s0 +kill {"inflight":1[^\n]*\n[^\n]*s0 +the kill fault fired as answer 1 of s0 left \(faults\.kill\.atAnswer\)\n[^\n]*#1 +killed\n[^\n]*s0 +restart\n[\s\S]*#2 +answer 201/);
    expect(run.reports['op1']).toBe(2);
    expect(run.violations.map((v) => v.invariant)).toContain('exactly-one');
  });

  it('the timeline names the kill fault that fired and where: the step it waits at (never shown as reached), or the time', async () => {
    const at = (kill: Record<string, unknown>) => parseScenario(JSON.stringify({
      format: SCENARIO_FORMAT, name: 'kill', seed: 1,
      service: { module: 'cached-payments' },
      client: { keySource: 'tool_call', maxAttempts: 2, timeoutMs: 2000 },
      faults: { kill: { restartAfterMs: 5, ...kill } },
      operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay', steps: 'pay' }, { id: 'op2', runId: 'run-2', module: 'checkout', title: 'Pay', steps: 'pay', startMs: 100 }],
      expect: {},
    }));
    const step = (await runScenario(at({ atStep: 'charge' }), { service: payments(true), keepTrace: true })).trace.join('\n');
    expect(step).toMatch(/s0 +kill {"inflight":1[^\n]*\n[^\n]*s0 +the kill fault fired as a request of s0 reached step 'charge' \(faults\.kill\.atStep\)\n[^\n]*#1 +killed/);
    const second = (await runScenario(at({ atStep: 'charge', nth: 2 }), { service: payments(true), keepTrace: true })).trace.join('\n');
    expect(second).toMatch(/the kill fault fired as a request of s0 reached step 'charge', its reach 2 \(faults\.kill\.atStep\)/);
    const timed = (await runScenario(at({ atMs: 1 }), { service: payments(true), keepTrace: true })).trace.join('\n');
    expect(timed).toMatch(/s0 +the kill fault fired at 1 ms \(faults\.kill\.atMs\)/);
  });

  it('a file with two kill times is refused at faults.kill, naming the three ways', async () => {
    const dir = tmp('rs-kill-answer-file-');
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({
      format: SCENARIO_FORMAT, name: 'bad', seed: 1, service: { variant: 'key_atomic' },
      faults: { kill: { atAnswer: 1, atStep: 'process' } },
      operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay', steps: 'pay' }],
    }));
    const before = readFileSync(file, 'utf8');
    const out = await runMain(['replay', file]);
    expect(out.code).toBe(2);
    expect(out.err).toMatch(/faults\.kill.*exactly one of atMs, atStep or atAnswer/);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });
});
