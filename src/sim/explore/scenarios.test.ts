/**
 * Bounded exhaustive exploration of real scenarios: key_atomic survives every
 * schedule of the same-key race; key_split fails inside the enumeration.
 */
import { describe, expect, it } from 'vitest';
import { exploreAll } from './exhaustive.js';
import { runScenario, type ScenarioRun } from '../../scenario/run.js';
import { canonicalScenario } from '../../scenario/canonical.js';
import { parseScenario } from '../../scenario/load.js';
import { ListChoice } from '../choice/list.js';
import type { Scenario } from '../../scenario/schema.js';


const row = (variant: string, keySource: string) => ({ variant, keySource }) as Parameters<typeof canonicalScenario>[1];
const failing = (r: ScenarioRun) => r.violations.length > 0 || r.reports.op1 !== 1;

function explore(s: Scenario, schedulesMax: number) {
  return exploreAll((choices) => runScenario(s, { choices }), { schedulesMax, keep: failing });
}

/** Two workers on one key, the second 1 ms later; slow processing (5 ms), fixed 1 ms latency. */
function twoWorkers(variant: string): Scenario {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2',
    name: `two workers, one key · ${variant}`,
    seed: 1,
    service: { variant },
    client: { keySource: 'tool_call', maxAttempts: 2 },
    network: { latencyMeanMs: 1, latencySdMs: 0 },
    faults: { slowMs: 5 },
    operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers: 2, staggerMs: 1 }],
    expect: {},
  }));
}

describe('exhaustive exploration of concurrent_duplicate (two workers, one key, 100 ms processing)', () => {
  it('key_atomic/tool_call: every one of its 84 schedules ends with exactly 1 report and no violation', async () => {
    const e = await explore(canonicalScenario('concurrent_duplicate', row('key_atomic', 'tool_call')), 10_000);
    expect(e.complete).toBe(true);
    expect(e.schedules).toBe(84);
    expect(e.results).toEqual([]);
  });

  it('key_split/tool_call: fails inside the enumeration (bounded; the whole tree has 36,000 schedules), and a failing schedule replays', async () => {
    const s = canonicalScenario('concurrent_duplicate', row('key_split', 'tool_call'));
    const e = await explore(s, 300);
    expect(e.complete).toBe(false);
    expect(e.schedules).toBe(300);
    expect(e.results.length).toBeGreaterThan(0);
    const first = e.results[0]!;
    expect(first.result.reports.op1).toBe(2);
    const again = await runScenario(s, { choices: new ListChoice(first.choices) });
    expect(again.reports.op1).toBe(2);
    expect(again.result.traceHash).toBe(first.result.result.traceHash);
  });
});

describe('exhaustive exploration of a smaller two-worker race (5 ms processing, 1 ms stagger)', () => {
  it('key_atomic holds on all 30 schedules; key_split fails on all 300 of its schedules', async () => {
    const atomic = await explore(twoWorkers('key_atomic'), 10_000);
    expect(atomic).toMatchObject({ schedules: 30, complete: true, results: [] });
    const split = await explore(twoWorkers('key_split'), 10_000);
    expect(split).toMatchObject({ schedules: 300, complete: true });
    expect(split.results).toHaveLength(300);
    expect(split.results.every((r) => r.result.violations.some((v) => v.invariant === 'exactly-one'))).toBe(true);
  });
});
