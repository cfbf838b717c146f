import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PctChoice, taskOf } from './pct.js';
import { RandomChoice } from './random.js';
import { Kernel } from '../kernel.js';
import type { ChoiceSource } from './source.js';

/**
 * `n` tasks t0..t(n-1), each taking `pre` steps, then reading a shared counter,
 * yielding, writing counter + 1, then taking `post` more steps. A lost update
 * (counter < n at the end) is a depth-2 bug: one task's read must fall
 * between another's read and write.
 */
async function counterModel(choices: ChoiceSource, opts: { n?: number; pre?: number; post?: number } = {}) {
  const n = opts.n ?? 2;
  const k = new Kernel({ seed: 1, choices, trace: false });
  let counter = 0;
  const order: string[] = [];
  for (let t = 0; t < n; t++) {
    const name = `t${t}`;
    k.spawn(name, async () => {
      order.push(`${name}:begin`);
      for (let i = 0; i < (opts.pre ?? 0); i++) await k.yield(`pre${i}`);
      await k.yield('read');
      const seen = counter;
      await k.yield('write');
      counter = seen + 1;
      for (let i = 0; i < (opts.post ?? 0); i++) await k.yield(`post${i}`);
      order.push(`${name}:end`);
    });
  }
  const result = await k.run();
  return { lost: counter < n, order, decisions: result.choices.length, result };
}

function rate(hits: number, runs: number) {
  return hits / runs;
}

describe('PctChoice', () => {
  it('is deterministic for a seed and differs across seeds', async () => {
    const a = await counterModel(new PctChoice({ seed: 7, depth: 3, stepsEstimate: 12 }), { pre: 3, post: 3 });
    const b = await counterModel(new PctChoice({ seed: 7, depth: 3, stepsEstimate: 12 }), { pre: 3, post: 3 });
    expect(b.result.choices).toEqual(a.result.choices);
    expect(b.result.traceHash).toBe(a.result.traceHash);
    const schedules = new Set<string>();
    for (let seed = 0; seed < 40; seed++) {
      const r = await counterModel(new PctChoice({ seed, depth: 3, stepsEstimate: 12 }), { pre: 3, post: 3 });
      schedules.add(JSON.stringify(r.result.choices.map((c) => c.chosen)));
    }
    expect(schedules.size).toBeGreaterThan(5);
  });

  it('always returns a valid index, whatever the labels (colons, reused names) and decision indices', () => {
    const label = fc.tuple(fc.constantFrom('a', 'b', 'c', 's0/op1.w0#1', 'x:y'), fc.constantFrom('start', 'read', 'p:q')).map(([t, s]) => `${t}:${s}`);
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 30 }), fc.array(fc.array(label, { minLength: 2, maxLength: 6 }), { maxLength: 40 }), (seed, depth, k, decisions) => {
        const pct = new PctChoice({ seed, depth, stepsEstimate: k });
        decisions.forEach((labels, i) => {
          const c = pct.choose(labels, i);
          expect(Number.isInteger(c) && c >= 0 && c < labels.length).toBe(true);
        });
      }),
    );
  });

  it('draws min(d − 1, k) distinct change points in [0, k)', () => {
    for (let seed = 0; seed < 50; seed++) {
      const p = new PctChoice({ seed, depth: 4, stepsEstimate: 5 });
      expect(p.changePoints).toHaveLength(3);
      expect(new Set(p.changePoints).size).toBe(3);
      expect(p.changePoints.every((c) => c >= 0 && c < 5)).toBe(true);
      expect(new PctChoice({ seed, depth: 4, stepsEstimate: 2 }).changePoints).toEqual([0, 1]);
      expect(new PctChoice({ seed, depth: 1 }).changePoints).toEqual([]);
    }
  });

  it('runs the highest-priority task; the task chosen at a change point drops below every initial priority', () => {
    const p = new PctChoice({ seed: 3, depth: 2, stepsEstimate: 1 }); // the change point is decision 0
    const labels = ['a:x', 'b:x', 'c:x'];
    const first = p.choose(labels, 0);
    const top = taskOf(labels[first]!);
    expect(p.priority(top)).toBe(1);
    for (const t of ['a', 'b', 'c'].filter((t) => t !== top)) expect(p.priority(t)!).toBeGreaterThanOrEqual(2);
    const second = p.choose(labels, 1);
    expect(second).not.toBe(first);
    // From now on the order is fixed by priority: the same task wins every time.
    for (let i = 2; i < 10; i++) expect(p.choose(labels, i)).toBe(second);
    // Initial priorities are distinct and at least d.
    const ranks = ['a', 'b', 'c'].filter((t) => t !== top).map((t) => p.priority(t)!);
    expect(new Set(ranks).size).toBe(2);
  });

  it('identifies tasks by the label up to its last colon', () => {
    expect(taskOf('op1.w0:sleep')).toBe('op1.w0');
    expect(taskOf('s0/op1.w0#1:process')).toBe('s0/op1.w0#1');
    expect(taskOf('a:b:c')).toBe('a:b');
    expect(taskOf('plain')).toBe('plain');
  });

  it('rejects a depth or step estimate below 1', () => {
    expect(() => new PctChoice({ seed: 1, depth: 0 })).toThrow(/depth/);
    expect(() => new PctChoice({ seed: 1, stepsEstimate: 0 })).toThrow(/stepsEstimate/);
  });

  it('depth 1 finds an ordering bug of depth 1 at rate >= 1/n, where uniform random almost never does', async () => {
    // Bug: t2 finishes all its steps before t0 takes its first one. PCT with
    // d = 1 hits it whenever t2's priority is above t0's: probability 1/2 >= 1/n = 1/3.
    const runs = 600;
    let pct = 0;
    let random = 0;
    const bug = (order: string[]) => order.indexOf('t2:end') < order.indexOf('t0:begin');
    for (let seed = 0; seed < runs; seed++) {
      if (bug((await counterModel(new PctChoice({ seed, depth: 1 }), { n: 3, pre: 6, post: 6 })).order)) pct++;
      if (bug((await counterModel(new RandomChoice(seed), { n: 3, pre: 6, post: 6 })).order)) random++;
    }
    expect(rate(pct, runs)).toBeGreaterThan(1 / 3);
    expect(rate(pct, runs)).toBeGreaterThan(0.42);
    expect(rate(pct, runs)).toBeLessThan(0.58);
    expect(rate(random, runs)).toBeLessThan(0.01);
  });

  it('depth 1 never preempts, so it never finds the depth-2 lost update; depth 2 finds it at rate >= 1/(n·k)', async () => {
    const shape = { n: 2, pre: 4, post: 4 };
    const decisions = (await counterModel(new PctChoice({ seed: 0, depth: 1 }), shape)).decisions;
    expect(decisions).toBe(1 + 4 + 2 + 4); // the top task runs all its steps while the other waits: each is a decision
    for (let seed = 0; seed < 100; seed++) expect((await counterModel(new PctChoice({ seed, depth: 1 }), shape)).lost).toBe(false);
    // Exactly one decision (the top task's read) lets the other task in between
    // read and write, so with one change point uniform in [0, k) the rate is 1/k.
    const k = 20;
    const runs = 2000;
    let hits = 0;
    for (let seed = 0; seed < runs; seed++) if ((await counterModel(new PctChoice({ seed, depth: 2, stepsEstimate: k }), shape)).lost) hits++;
    expect(rate(hits, runs)).toBeGreaterThanOrEqual(1 / (shape.n * k)); // the guarantee
    // and consistent with the exact 1/k = 0.05 (mean 100, sd ~9.7)
    expect(hits).toBeGreaterThan(70);
    expect(hits).toBeLessThan(130);
  });

  it('depth 3 keeps the depth-2 guarantee 1/(n·k^2)', async () => {
    const shape = { n: 3, pre: 2, post: 2 };
    const k = 12;
    const runs = 800;
    let hits = 0;
    for (let seed = 0; seed < runs; seed++) if ((await counterModel(new PctChoice({ seed, depth: 3, stepsEstimate: k }), shape)).lost) hits++;
    expect(rate(hits, runs)).toBeGreaterThanOrEqual(1 / (shape.n * k * k));
  });
});
