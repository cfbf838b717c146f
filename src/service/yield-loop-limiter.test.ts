import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { loadService } from './load.js';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { GAP_MS } from './fixtures/yield-loop-limiter.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const MODULE = 'src/service/fixtures/yield-loop-limiter.ts';

describe('a limiter in memory() that starts the next job from a timer callback\'s promise continuation (Bottleneck\'s yield loop)', () => {
  it('check --service holds — it was "a run did not end within the simulation\'s limit" or "never answered request …", exit 2', async () => {
    const found = tmp('found-');
    const r = await runMain(['check', '--service', MODULE, '--runs', '300', '--found', found, '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; coverage: { rows: Array<{ id: string; runs: number }> } };
    expect(j.verdict).toBe('holds');
    expect(j.coverage.rows.find((x) => x.id === 'overlap:2')?.runs).toBeGreaterThan(0);
  }, 120_000);

  it('two duplicates on one instance: the second job starts GAP_MS after both arrived, on the kernel\'s clock, after the first has answered; the same on every run', async () => {
    const def = await loadService(MODULE);
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'queued duplicate', seed: 1, service: { module: MODULE, epochMs: 1767225600000 },
      client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 15000 },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }], expect: {},
    }));
    const once = async () => {
      const r = await runScenario(s, { service: def, keepTrace: true });
      const at = r.trace.map((l) => /^\s*([\d.]+) ms\s+(s0\/\S+)\s+(check|answer \d+)/.exec(l)).filter((m) => m !== null).map((m) => [Number(m[1]), m[2], m[3]] as const);
      return { hash: r.result.traceHash, violations: r.violations.map((v) => v.invariant), at };
    };
    const a = await once();
    expect(a.violations).toEqual([]);
    // Both arrive at 1 ms. The first job starts on the next timer turn (Node's 0 ms is 1 ms) and
    // answers; the limiter yields, reads the clock at 3 ms and waits until 1 + GAP_MS for the second.
    expect(a.at).toEqual([
      [2, 's0/op1.w1#1', 'check'],
      [2, 's0/op1.w1#1', 'answer 201'],
      [1 + GAP_MS, 's0/op1.w0#2', 'check'],
      [1 + GAP_MS, 's0/op1.w0#2', 'answer 201'],
    ]);
    expect(await once()).toEqual(a);
  });
});
