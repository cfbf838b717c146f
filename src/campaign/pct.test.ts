/**
 * The campaign's PCT keeps its guarantee: a depth-2 bug is found at a rate
 * of at least 1/(n·k) per run (Burckhardt et al. 2010) with k fitted to the
 * run — also when the bug lies past the 40th decision, where the fixed
 * k = 40 the campaign used before could never place a change point.
 */
import { describe, expect, it } from 'vitest';
import { Kernel } from '../sim/kernel.js';
import { PctProbe } from '../sim/choice/pct-probe.js';
import { PctChoice } from '../sim/choice/pct.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { campaignPct, pctStepsEstimate } from './pct.js';

/**
 * Two tasks, each taking `pre` steps, then reading a shared counter,
 * yielding, and writing counter + 1. A lost update (counter 1 at the end)
 * needs one task preempted between its read and its write: depth 2. Under
 * PCT the higher-priority task runs first, so that preemption falls near
 * decision `pre` + 1.
 */
async function lateLostUpdate(choices: ChoiceSource, pre: number): Promise<{ lost: boolean; decisions: number }> {
  const k = new Kernel({ seed: 1, choices, trace: false });
  let counter = 0;
  for (const name of ['t0', 't1']) {
    k.spawn(name, async () => {
      for (let i = 0; i < pre; i++) await k.yield(`pre${i}`);
      await k.yield('read');
      const seen = counter;
      await k.yield('write');
      counter = seen + 1;
    });
  }
  const r = await k.run();
  return { lost: counter < 2, decisions: r.choices.length };
}

/** The probe the campaign runs before each PCT case. */
async function measure(pre: number): Promise<number> {
  const probe = new PctProbe();
  await lateLostUpdate(probe, pre);
  return probe.steps;
}

async function hitRate(source: (seed: number) => ChoiceSource, pre: number, runs: number): Promise<number> {
  let hits = 0;
  for (let seed = 0; seed < runs; seed++) if ((await lateLostUpdate(source(seed), pre)).lost) hits++;
  return hits;
}

describe('campaign PCT', () => {
  const pre = 45; // the race lies past decision 45
  it('a probe run measures the case: k covers every PCT run of it (its decisions alone would not)', async () => {
    const probe = await measure(pre);
    expect(probe).toBeGreaterThan(40);
    const k = pctStepsEstimate(probe);
    let longest = 0;
    for (let seed = 0; seed < 200; seed++) longest = Math.max(longest, (await lateLostUpdate(campaignPct(seed, probe), pre)).decisions);
    expect(longest).toBeLessThanOrEqual(k);
    expect(longest).toBeGreaterThan((await lateLostUpdate(new PctProbe(), pre)).decisions);
  });

  it('finds a depth-2 bug past the 40th decision at rate >= 1/(n·k) (depth 2), and the campaign source (depth 3) finds it too', async () => {
    const probe = await measure(pre);
    const k = pctStepsEstimate(probe);
    const n = 2;
    const runs = 1500;
    const bound = 1 / (n * k);
    const hits = await hitRate((seed) => new PctChoice({ seed, depth: 2, stepsEstimate: k }), pre, runs);
    // The guarantee with a safe margin: three standard deviations below the bound's mean.
    const mean = runs * bound;
    expect(hits).toBeGreaterThanOrEqual(mean - 3 * Math.sqrt(mean));
    expect(hits / runs).toBeGreaterThanOrEqual(bound);
    // The campaign's own source: depth 3, k from the same probe.
    expect(await hitRate((seed) => campaignPct(seed, probe), pre, 600)).toBeGreaterThan(0);
  });

  it('with the old fixed k = 40 the same bug is never found (what the probe fixes)', async () => {
    expect(await hitRate((seed) => new PctChoice({ seed, depth: 3, stepsEstimate: 40 }), pre, 600)).toBe(0);
  });
});
