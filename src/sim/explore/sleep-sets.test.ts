import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { exploreAll } from './exhaustive.js';
import { Kernel } from '../kernel.js';
import { ListChoice } from '../choice/list.js';
import type { ChoiceSource } from '../choice/source.js';
import type { Footprint } from '../footprint.js';

/** One step of a toy task: read or write one shared register. */
interface Op {
  kind: 'r' | 'w';
  reg: string;
}

/**
 * Tasks whose every step reads or writes one shared register, each step
 * declared with an exact footprint (or, with `declare: false`, undeclared).
 * The end state is every register plus every task's local accumulator, so
 * two schedules end alike only when every conflicting pair ran in the same order.
 */
async function registerModel(choices: ChoiceSource, programs: Op[][], declare: boolean | ((fp: Footprint) => Footprint) = true): Promise<string> {
  const k = new Kernel({ seed: 1, choices, trace: false });
  const regs: Record<string, number> = {};
  const accs: number[] = programs.map(() => 0);
  const fpOf = (op: Op): Footprint | undefined => {
    if (declare === false) return undefined;
    const fp = op.kind === 'r' ? { reads: [op.reg] } : { writes: [op.reg] };
    return declare === true ? fp : declare(fp);
  };
  programs.forEach((ops, t) => {
    k.spawn(`t${t}`, async () => {
      for (let i = 0; i < ops.length; i++) {
        // Declared where the task parks: what the step after the yield touches.
        await k.yield(`${ops[i]!.kind}${ops[i]!.reg}`, fpOf(ops[i]!));
        const op = ops[i]!;
        if (op.kind === 'r') accs[t] = (accs[t]! * 31 + (regs[op.reg] ?? 0) + 1) % 1_000_003;
        else regs[op.reg] = (accs[t]! * 7 + t * 100 + i + 1) % 1_000_003;
      }
    }, declare === false ? {} : { footprint: {} });
  });
  await k.run();
  return JSON.stringify([Object.entries(regs).sort(), accs]);
}

async function endStates(programs: Op[][], reduce: boolean, declare: boolean | ((fp: Footprint) => Footprint) = true) {
  const states = new Set<string>();
  const e = await exploreAll((c) => registerModel(c, programs, declare), {
    schedulesMax: 100_000,
    reduce,
    onSchedule: (x) => void states.add(x.result),
  });
  return { states, e };
}

const w = (reg: string): Op => ({ kind: 'w', reg });
const r = (reg: string): Op => ({ kind: 'r', reg });

describe('exploreAll with sleep sets (reduce: true)', () => {
  it('runs one schedule when no steps conflict, every order of the conflicting steps when all do', async () => {
    const disjoint = await endStates([[w('a'), w('a'), w('a')], [w('b'), w('b'), w('b')]], true);
    expect(disjoint.e).toMatchObject({ schedules: 1, complete: true });
    const shared = await endStates([[w('a'), w('a'), w('a')], [w('a'), w('a'), w('a')]], true);
    const full = await endStates([[w('a'), w('a'), w('a')], [w('a'), w('a'), w('a')]], false);
    // Each task also takes a first step (up to its first yield) that touches
    // nothing: 70 interleavings of 4 + 4 steps, 20 orders of the 3 + 3 writes.
    expect(full.e.schedules).toBe(70);
    expect(shared.e).toMatchObject({ schedules: 20, complete: true });
    expect(shared.states.size).toBe(full.states.size);
  });

  it('two reads commute; a read and a write do not', async () => {
    expect((await endStates([[r('a'), w('x')], [r('a'), w('y')]], true)).e.schedules).toBe(1);
    // One conflicting pair (t0 writes a, t1 reads a): two orders, two traces.
    const one = await endStates([[w('a'), w('x')], [w('y'), r('a')]], true);
    expect(one.e.schedules).toBe(2);
    expect(one.states.size).toBe(2);
  });

  it('an undeclared step conflicts with everything: the same count as without reduction', async () => {
    const programs = [[w('a'), w('b')], [w('c'), w('d')], [w('e')]];
    const reduced = await endStates(programs, true, false);
    const full = await endStates(programs, false, false);
    expect(reduced.e.schedules).toBe(full.e.schedules);
    expect(reduced.e.blocked).toBe(0);
  });

  it('reaches exactly the end states the full enumeration reaches, for random programs', async () => {
    const op = fc.record({ kind: fc.constantFrom<'r' | 'w'>('r', 'w'), reg: fc.constantFrom('a', 'b', 'c') });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 2 }), { minLength: 2, maxLength: 3 }), async (programs) => {
        const reduced = await endStates(programs, true);
        const full = await endStates(programs, false);
        expect(reduced.e.complete).toBe(true);
        expect([...reduced.states].sort()).toEqual([...full.states].sort());
        expect(reduced.e.schedules).toBeLessThanOrEqual(full.e.schedules);
      }),
      { numRuns: 80, seed: 10 },
    );
  });

  it('goes red when a conflicting step is declared independent: end states are lost', async () => {
    // The classic lost update: both read a, both write a. Declaring the
    // reads as touching nothing lets the reduction skip the interleavings
    // where a read sees the other task's write.
    const programs = [[r('a'), w('a')], [r('a'), w('a')]];
    const full = await endStates(programs, false);
    const wrong = await endStates(programs, true, (fp) => (fp.reads ? {} : fp));
    expect(wrong.states.size).toBeLessThan(full.states.size);
    const right = await endStates(programs, true);
    expect(right.states.size).toBe(full.states.size);
  });

  it('every complete schedule replays with a plain list of its choices', async () => {
    const programs = [[w('a'), r('b')], [w('b'), r('a')], [w('a')]];
    const { e } = await endStates(programs, true);
    expect(e.results.length).toBe(e.schedules);
    for (const x of e.results) expect(await registerModel(new ListChoice(x.choices), programs)).toBe(x.result);
  });
});
