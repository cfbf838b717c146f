/**
 * Each guarantee of the search goes red when its mechanism is disabled:
 * - "0 means continue the running task" is what makes fast-check's shrinking
 *   remove preemptions: with the old meaning (0 switches away after every
 *   step) the shrunk race has about ten preemptions instead of one;
 * - the minimiser is what makes one preemption a guarantee rather than a
 *   frequent outcome of fast-check's greedy, budgeted shrinking.
 */
import { describe, expect, it } from 'vitest';
import { claimById } from '../src/campaign/claims.js';
import { runCampaign } from '../src/campaign/run.js';
import type { ChoiceSource } from '../src/sim/choice/source.js';

/** The pre-format-2 meaning of a choice list: 0 is "switch to the next task" whenever the running task could continue. */
class SwitchFirstList implements ChoiceSource {
  readonly name = 'switch-first';
  constructor(private readonly list: readonly number[]) {}
  choose(labels: readonly string[], index: number, _t: number, continuing: boolean): number {
    const v = index < this.list.length ? this.list[index]! : 0;
    const n = labels.length;
    return (((continuing ? v + 1 : v) % n) + n) % n;
  }
}

const race = claimById('key_split-tool_call-race-fails');
const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);

async function preemptionsOnSeeds(o: { minimise: boolean; switchFirst: boolean }): Promise<number[]> {
  const out: number[] = [];
  for (const seed of SEEDS) {
    const r = await runCampaign({ claim: race, runs: 3000, seed, minimise: o.minimise, ...(o.switchFirst ? { listSource: (l) => new SwitchFirstList(l) } : {}) });
    expect(r.verdict).toBe('fails');
    out.push(r.counterexample!.size.preemptions);
  }
  return out;
}

describe('search mechanisms, each disabled', () => {
  it('with 0 meaning "switch" and no minimiser, the shrunk race is never the 1-preemption schedule', async () => {
    const p = await preemptionsOnSeeds({ minimise: false, switchFirst: true });
    expect(p.filter((x) => x === 1).length).toBe(0);
    expect(Math.min(...p)).toBeGreaterThan(3);
  });

  it('with 0 meaning "continue" but no minimiser, fast-check alone reaches 1 preemption on some seeds but not all', async () => {
    const p = await preemptionsOnSeeds({ minimise: false, switchFirst: false });
    const ones = p.filter((x) => x === 1).length;
    expect(ones).toBeGreaterThan(0);
    expect(ones).toBeLessThan(SEEDS.length);
  });

  it('the minimiser repairs even the old meaning: 1 preemption on every seed', async () => {
    const p = await preemptionsOnSeeds({ minimise: true, switchFirst: true });
    expect(p).toEqual(SEEDS.map(() => 1));
  });
});
