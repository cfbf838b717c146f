import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { loadService } from './load.js';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const MODULE = 'src/service/fixtures/lock-with-timeout.ts';

describe('a request idle on a timer of its own whose awaited promise another request settles (a lock with a deadline on the wait: async-mutex withTimeout, p-queue)', () => {
  it('runs as in Node: its work goes on in its own task, and check --service holds — it was "never answered request …", exit 2', async () => {
    const found = tmp('found-');
    const r = await runMain(['check', '--service', MODULE, '--runs', '300', '--found', found, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; coverage: { rows: Array<{ id: string; runs: number }> } };
    expect(j.verdict).toBe('holds');
    // Requests did queue behind one another in one process: the waiting path ran.
    expect(j.coverage.rows.find((x) => x.id === 'overlap:2')?.runs).toBeGreaterThan(0);
  }, 120_000);

  it('two duplicates on one instance, the first slow at its step: the second, idle on its deadline timer, works as soon as the first releases the lock — it waited for its own deadline (8 s late) — the same on every run', async () => {
    const def = await loadService(MODULE);
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'queued duplicate', seed: 1, service: { module: MODULE, epochMs: 1767225600000 },
      client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 15000 }, faults: { slowMs: 2000, slowAtStep: 'check' },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }], expect: {},
    }));
    const once = async () => {
      const r = await runScenario(s, { service: def, keepTrace: true });
      // "2001.000 ms  s0/op1.w0#2    check": when each request reached a step or answered, and what.
      const at = r.trace.map((l) => /^\s*([\d.]+) ms\s+(s0\/\S+)\s+(check|charge|answer \d+)/.exec(l)).filter((m) => m !== null).map((m) => `${m[1]} ${m[2]} ${m[3]}`);
      return { hash: r.result.traceHash, violations: r.violations.map((v) => v.invariant), at };
    };
    const a = await once();
    expect(a.violations).toEqual([]);
    expect(a.at).toEqual([
      '1.000 s0/op1.w1#1 check',
      '2001.000 s0/op1.w1#1 charge',
      '2001.000 s0/op1.w1#1 answer 201',
      // The lock is free at 2001 ms: the waiter's turn comes then (its deadline, 10 s, is not what wakes it).
      '2001.000 s0/op1.w0#2 check',
      '4001.000 s0/op1.w0#2 answer 201',
    ]);
    expect(await once()).toEqual(a);
  });
});
