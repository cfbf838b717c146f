import { describe, expect, it, test } from 'vitest';
import { ListChoice } from './list.js';
import { RandomChoice } from './random.js';
import { ReplayChoice, ReplayDivergenceError } from './replay.js';
import { PctProbe } from './pct-probe.js';
import { PctChoice, taskOf } from './pct.js';
import type { ChoiceRecord } from './source.js';

/**
 * The small choice sources, called directly as the kernel calls them. The
 * kernel and scenario suites drive them through whole runs; these pin each
 * rule and each sentence a user reads when a replay diverges.
 */

describe('ListChoice', () => {
  test('takes each entry modulo the candidates (negative ones too), then 0 past the end of the list', () => {
    const c = new ListChoice([5, -1, 2]);
    expect(c.name).toBe('list');
    expect(c.choose(['a', 'b', 'c'], 0)).toBe(2);
    expect(c.choose(['a', 'b', 'c'], 1)).toBe(2);
    expect(c.choose(['a', 'b'], 2)).toBe(0);
    expect(c.choose(['a', 'b', 'c'], 3)).toBe(0);
    expect(new ListChoice([3]).choose(['a', 'b', 'c', 'd'], 0)).toBe(3);
  });
});

describe('RandomChoice', () => {
  test('a seeded uniform index in range; the same seed gives the same choices', () => {
    const draw = (seed: number) => {
      const c = new RandomChoice(seed);
      return Array.from({ length: 200 }, (_, i) => c.choose(['a', 'b', 'c'].slice(0, 2 + (i % 2))));
    };
    const a = draw(1);
    expect(new RandomChoice(1).name).toBe('random');
    expect(a).toEqual(draw(1));
    expect(a).not.toEqual(draw(2));
    expect(new Set(a)).toEqual(new Set([0, 1, 2]));
    a.forEach((v, i) => expect(v).toBeLessThan(2 + (i % 2)));
  });
});

describe('ReplayChoice', () => {
  const rec = (t: number, chosen: number, of: string[], preempted: boolean): ChoiceRecord => ({ t, chosen, of, preempted });
  const records = [rec(1, 1, ['a:x', 'b:y'], true), rec(3, 0, ['b:z', 'a:w'], false)];
  const caught = (f: () => unknown): ReplayDivergenceError => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(ReplayDivergenceError);
      return e as ReplayDivergenceError;
    }
    throw new Error('expected a divergence');
  };
  const TAIL = ' — the model or its inputs changed, the file was edited, or something in the model is nondeterministic';

  test('follows the recording: the recorded index at the recorded time among the recorded labels; finish accepts an identical run', () => {
    const c = new ReplayChoice(records);
    expect(c.name).toBe('replay');
    expect(c.choose(['a:x', 'b:y'], 0, 1)).toBe(1);
    expect(c.choose(['b:z', 'a:w'], 1, 3)).toBe(0);
    expect(() => c.finish(records)).not.toThrow();
  });

  test('candidates: a changed label, or one label more or fewer', () => {
    const c = new ReplayChoice(records);
    const e = caught(() => c.choose(['a:x', 'b:CHANGED'], 0, 1));
    expect(e.name).toBe('ReplayDivergenceError');
    expect(e.message).toBe(`replay diverged at choice #0: recorded candidates ["a:x","b:y"], but the run offered ["a:x","b:CHANGED"]${TAIL}`);
    expect(e.toJSON()).toEqual({ index: 0, kind: 'candidates', message: e.message, expected: records[0], actual: { t: 1, of: ['a:x', 'b:CHANGED'] } });
    expect(caught(() => c.choose(['a:x', 'b:y', 'c:q'], 0, 1)).kind).toBe('candidates');
    expect(caught(() => c.choose(['a:x'], 0, 1)).kind).toBe('candidates');
  });

  test('time: the same candidates at another virtual time', () => {
    const e = caught(() => new ReplayChoice(records).choose(['b:z', 'a:w'], 1, 4));
    expect([e.index, e.kind]).toEqual([1, 'time']);
    expect(e.message).toBe(`replay diverged at choice #1: recorded at t=3 ms, but the run reached it at t=4 ms (candidates ["b:z","a:w"])${TAIL}`);
  });

  test('extra-decision: a decision past the end of the recording (an empty one allows none)', () => {
    const e = caught(() => new ReplayChoice([]).choose(['a:x', 'b:y'], 0, 7));
    expect([e.index, e.kind, e.expected]).toEqual([0, 'extra-decision', undefined]);
    expect(e.message).toBe(`replay diverged at choice #0: the recorded schedule ends after 0 decision(s), but the run made another at t=7 ms among ["a:x","b:y"]${TAIL}`);
    expect(e.toJSON()).toMatchObject({ expected: null, actual: { t: 7, of: ['a:x', 'b:y'] } });
  });

  test('unused-decisions: the run stopped short of the recording', () => {
    const e = caught(() => new ReplayChoice(records).finish(records.slice(0, 1)));
    expect([e.index, e.kind, e.actual]).toEqual([1, 'unused-decisions', undefined]);
    expect(e.message).toBe(`replay diverged at choice #1: the run made only 1 decision(s), but the recorded schedule has more, from #1 (t=3 ms among ["b:z","a:w"])${TAIL}`);
    expect(e.toJSON()).toMatchObject({ actual: null });
  });

  test('preemption: a recorded flag that the run does not reproduce, at the first such decision', () => {
    const made = [records[0]!, { ...records[1]!, preempted: true }];
    const e = caught(() => new ReplayChoice(records).finish(made));
    expect([e.index, e.kind]).toEqual([1, 'preemption']);
    expect(e.actual).toEqual({ t: 3, of: ['b:z', 'a:w'], preempted: true });
    expect(e.message).toBe(`replay diverged at choice #1: recorded preempted=false, but choosing candidate 0 there is preempted=true${TAIL}`);
    // A preemption mismatch is reported before unused decisions.
    expect(caught(() => new ReplayChoice([...records, rec(5, 0, ['a:x', 'b:y'], false)]).finish(made)).kind).toBe('preemption');
  });

  test('the trace lines of the run are carried along, and toJSON copies the offered labels', () => {
    const offered = ['a:x', 'b:y', 'c'];
    const e = caught(() => new ReplayChoice(records).choose(offered, 0, 1));
    expect(e.trace).toEqual([]);
    const j = e.toJSON() as { actual: { of: string[] } };
    expect(j.actual.of).toEqual(offered);
    expect(j.actual.of).not.toBe(offered);
  });
});

describe('PctProbe', () => {
  test('counts the steps at instants where the kernel decided, and only those', () => {
    const p = new PctProbe();
    expect(p.name).toBe('pct-probe');
    // t=0: two free steps, no decision — not counted.
    p.freeStep('a', undefined, 0);
    p.freeStep('b', undefined, 0);
    expect(p.steps).toBe(0);
    // t=1: a decision (the chosen step is one of the steps) and two free steps.
    expect(p.choose(['a:x', 'b:y'], 0, 1)).toBe(0);
    p.freeStep('b', undefined, 1);
    p.freeStep('a', undefined, 1);
    expect(p.steps).toBe(3);
    // t=2: free steps only — the count stays; t=3: one decision.
    p.freeStep('a', undefined, 2);
    expect(p.steps).toBe(3);
    p.choose(['a:x', 'b:y'], 1, 3);
    expect(p.steps).toBe(4);
    p.choose(['a:x', 'b:y'], 2, 3);
    expect(p.steps).toBe(5);
  });
});

describe('PctChoice: ranks, ties and demotions', () => {
  it('the task name is the label up to its last colon (empty before a leading colon)', () => {
    expect(taskOf(':x')).toBe('');
    expect(taskOf('a:b:c')).toBe('a:b');
    expect(taskOf('plain')).toBe('plain');
  });

  it('two candidates of one task tie, and the earlier-runnable one wins', () => {
    for (const seed of [1, 2, 3]) expect(new PctChoice({ seed }).choose(['a:x', 'a:y'], 70)).toBe(0);
    expect(new PctChoice({ seed: 1 }).name).toBe('pct');
  });

  it('the first tasks seen take exactly the priorities depth, depth + 1, … (nothing else is ranked)', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const p = new PctChoice({ seed, depth: 2, stepsEstimate: 100 });
      expect(p.priority('a')).toBeUndefined();
      p.choose(['a:x', 'b:y'], 99);
      expect([p.priority('a'), p.priority('b')].sort()).toEqual([2, 3]);
    }
  });

  it('a task demoted at a change point leaves the ranking: a task seen later ranks from depth', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const p = new PctChoice({ seed, depth: 2, stepsEstimate: 1 });
      expect(p.changePoints).toEqual([0]);
      p.choose(['a:x', 'a:y'], 0);
      expect(p.priority('a')).toBe(1);
      p.choose(['b:x', 'a:y'], 1);
      expect(p.priority('b')).toBe(2);
    }
  });

  it('a task already demoted and chosen again at a change point takes the new low priority; the others keep theirs', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const p = new PctChoice({ seed, depth: 4, stepsEstimate: 3 });
      const labels = ['a:s', 'b:s', 'c:s'];
      p.choose(labels, 0);
      p.choose(labels, 1);
      // Two tasks are demoted (priorities below depth 4, in the change points' order); z is not.
      const demoted = ['a', 'b', 'c'].filter((t) => p.priority(t)! < 4);
      const z = ['a', 'b', 'c'].find((t) => p.priority(t) === 4)!;
      expect(demoted).toHaveLength(2);
      const [x, y] = demoted as [string, string];
      const higher = p.priority(x)! > p.priority(y)! ? 0 : 1;
      expect(p.choose([`${x}:s`, `${y}:s`], 2)).toBe(higher);
      expect(p.priority(z)).toBe(4);
    }
  });
});
