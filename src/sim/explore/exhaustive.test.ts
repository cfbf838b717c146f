import { describe, expect, it } from 'vitest';
import { exploreAll, nextPrefix } from './exhaustive.js';
import { ExplorationDivergenceError, PrefixChoice } from './prefix.js';
import { Kernel } from '../kernel.js';
import { ListChoice } from '../choice/list.js';
import type { ChoiceSource } from '../choice/source.js';
import { runCounterRace } from '../demo-model.js';

/** `tasks` tasks, each yielding `yields` times: every task takes yields + 1 steps, all always runnable. */
async function yieldModel(choices: ChoiceSource, tasks: number, yields: number): Promise<string[]> {
  const k = new Kernel({ seed: 1, choices, trace: false });
  const steps: string[] = [];
  for (let t = 0; t < tasks; t++) {
    k.spawn(`t${t}`, async () => {
      steps.push(`t${t}`);
      for (let i = 0; i < yields; i++) {
        await k.yield(`y${i}`);
        steps.push(`t${t}`);
      }
    });
  }
  await k.run();
  return steps;
}

function binomial(n: number, r: number): number {
  let c = 1;
  for (let i = 1; i <= r; i++) c = (c * (n - r + i)) / i;
  return c;
}

const factorial = (n: number): number => (n <= 1 ? 1 : n * factorial(n - 1));

describe('nextPrefix', () => {
  it('increments the deepest decision with an untried candidate and drops the rest', () => {
    expect(nextPrefix([0, 0, 0], [2, 2, 2])).toEqual([0, 0, 1]);
    expect(nextPrefix([0, 1, 1], [2, 2, 2])).toEqual([1]);
    expect(nextPrefix([0, 2, 1], [2, 3, 2])).toEqual([1]);
    expect(nextPrefix([1, 2, 1], [2, 3, 2])).toBeUndefined();
    expect(nextPrefix([], [])).toBeUndefined();
  });
});

describe('exploreAll', () => {
  it('counts every interleaving of 2 tasks × s steps: C(2s, s) schedules, each distinct and each replayable', async () => {
    for (let yields = 0; yields <= 4; yields++) {
      const s = yields + 1; // steps per task
      const interleavings = new Set<string>();
      const e = await exploreAll((c) => yieldModel(c, 2, yields), {
        schedulesMax: 10_000,
        onSchedule: (x) => void interleavings.add(x.result.join(' ')),
      });
      expect(e.complete).toBe(true);
      expect(e.schedules).toBe(binomial(2 * s, s)); // 2, 6, 20, 70, 252
      expect(interleavings.size).toBe(e.schedules);
      for (const r of e.results.slice(0, 20)) {
        // A list replays the same interleaving (choices past the list are 0, as in the enumeration).
        expect(await yieldModel(new ListChoice(r.choices), 2, yields)).toEqual(r.result);
      }
    }
  });

  it('counts (3s)!/(s!)^3 schedules for 3 tasks × s steps', async () => {
    for (const yields of [0, 1, 2]) {
      const s = yields + 1;
      const e = await exploreAll((c) => yieldModel(c, 3, yields), { schedulesMax: 10_000, keep: () => false });
      expect(e.complete).toBe(true);
      expect(e.schedules).toBe(factorial(3 * s) / factorial(s) ** 3); // 6, 90, 1680
      expect(e.results).toEqual([]);
    }
  });

  it('respects schedulesMax and reports complete: false', async () => {
    const cut = await exploreAll((c) => yieldModel(c, 2, 2), { schedulesMax: 7 });
    expect(cut).toMatchObject({ schedules: 7, complete: false });
    expect(cut.results).toHaveLength(7);
    // Reaching the limit with the last schedule is still complete.
    expect(await exploreAll((c) => yieldModel(c, 2, 2), { schedulesMax: 20 })).toMatchObject({ schedules: 20, complete: true });
    expect(await exploreAll((c) => yieldModel(c, 2, 2), { schedulesMax: 0 })).toMatchObject({ schedules: 0, complete: false });
  });

  it('stops when onSchedule returns false', async () => {
    const e = await exploreAll((c) => yieldModel(c, 2, 2), { schedulesMax: 100, onSchedule: (x) => x.index < 4 });
    expect(e).toMatchObject({ schedules: 5, complete: false });
  });

  it('a model with no decisions has exactly one schedule', async () => {
    const e = await exploreAll((c) => yieldModel(c, 1, 3), { schedulesMax: 10 });
    expect(e).toMatchObject({ schedules: 1, complete: true, decisionsMax: 0 });
    expect(e.results[0]!.choices).toEqual([]);
  });

  it('finds every lost-update schedule of the demo counter race, and every one replays', async () => {
    const e = await exploreAll((choices) => runCounterRace({ seed: 5, workers: 2, rounds: 2, choices, trace: false }), {
      schedulesMax: 10_000,
      keep: (r) => r.counter < r.expected,
    });
    expect(e.complete).toBe(true);
    expect(e.results.length).toBeGreaterThan(0);
    expect(e.results.length).toBeLessThan(e.schedules);
    for (const r of e.results) {
      const again = await runCounterRace({ seed: 5, workers: 2, rounds: 2, choices: new ListChoice(r.choices), trace: false });
      expect(again.counter).toBe(r.result.counter);
    }
  });

  it('reports a model that is nondeterministic under a fixed schedule', async () => {
    let runs = 0;
    // The second and later runs have one task more: the same prefix offers different candidates.
    const flaky = (c: ChoiceSource) => yieldModel(c, runs++ === 0 ? 2 : 3, 1);
    await expect(exploreAll(flaky, { schedulesMax: 100 })).rejects.toBeInstanceOf(ExplorationDivergenceError);
  });
});

describe('PrefixChoice', () => {
  it('follows its prefix, then takes candidate 0, recording choices and arities', () => {
    const p = new PrefixChoice([1, 2]);
    expect(p.choose(['a:x', 'b:x'], 0)).toBe(1);
    expect(p.choose(['a:x', 'b:x', 'c:x'], 1)).toBe(2);
    expect(p.choose(['a:x', 'b:x'], 2)).toBe(0);
    expect(p.chosen).toEqual([1, 2, 0]);
    expect(p.arities).toEqual([2, 3, 2]);
    expect(() => new PrefixChoice([2]).choose(['a:x', 'b:x'], 0)).toThrow(ExplorationDivergenceError);
  });
});
