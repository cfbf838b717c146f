import type { ChoiceSource } from '../choice/source.js';
import { conflicts, type Footprint } from '../footprint.js';
import { taskOf } from '../choice/pct.js';
import { ExplorationDivergenceError } from './prefix.js';

/** Thrown (and caught by the explorer) when a run can only continue with a step the reduction has already covered. */
export class SleepSetBlocked extends Error {
  constructor(readonly index: number) {
    super(`sleep-set blocked at decision #${index}: every continuation repeats an explored order`);
    this.name = 'SleepSetBlocked';
  }
}

/** One decision on the explorer's depth-first path. */
export interface SleepNode {
  /** Candidate task names, in the kernel's order. */
  names: string[];
  /** Each candidate's declared footprint (undefined: conflicts with everything). */
  fps: Array<Footprint | undefined>;
  /** The sleep set on entry: tasks whose next step need not run here (an equivalent order was explored). */
  sleep: Map<string, Footprint | undefined>;
  /** Candidates whose subtrees are finished, with their footprints. */
  done: Map<string, Footprint | undefined>;
  /** Index of the candidate the current run takes here. */
  chosen: number;
}

/**
 * The choice source of one run of {@link exploreAll} with sleep sets
 * (Godefroid, "Partial-Order Methods for the Verification of Concurrent
 * Systems", 1996, ch. 5). It follows the explorer's path of decisions, then
 * takes the first candidate not asleep (candidate 0, "continue", first), and
 * keeps the current sleep set: after a step runs, a sleeping task stays
 * asleep only while every step taken since commutes with its own. A run that
 * reaches a point where only sleeping tasks can run is a reordering of
 * independent steps of a run already explored, and is abandoned
 * ({@link SleepSetBlocked}); so every complete run is a different
 * Mazurkiewicz trace, and every trace is run at least once.
 *
 * Task identity is the task name (the label up to its last `:`): names must
 * be unique among the candidates of a decision.
 */
export class SleepSetChoice implements ChoiceSource {
  readonly name = 'exhaustive';
  /** The index chosen at each decision of this run. */
  readonly chosen: number[] = [];
  /** The number of candidates at each decision of this run. */
  readonly arities: number[] = [];
  private z = new Map<string, Footprint | undefined>();

  constructor(
    /** The explorer's path: followed where it exists, extended with new nodes past its end. */
    readonly path: SleepNode[],
    /** Filters declared footprints before use (tests plant wrong declarations with it). */
    private readonly declared: (fp: Footprint | undefined) => Footprint | undefined = (fp) => fp,
  ) {}

  choose(labels: readonly string[], index: number, _t: number, _c: boolean, footprints?: ReadonlyArray<Footprint | undefined>): number {
    if (index !== this.chosen.length) throw new Error(`SleepSetChoice: decision #${index} out of order; use one source per run`);
    const names = labels.map(taskOf);
    let node = this.path[index];
    if (node !== undefined) {
      if (node.names.length !== names.length || node.names.some((n, i) => n !== names[i])) {
        throw new ExplorationDivergenceError(index, node.names.length, names.length, this.path.slice(0, index).map((n) => n.chosen), { before: node.names, now: names });
      }
    } else {
      if (new Set(names).size !== names.length) throw new Error(`exploreAll (reduce): two candidates share a task name at decision #${index} (${labels.join(', ')}); reduction identifies tasks by name`);
      const fps = names.map((_, i) => this.declared(footprints?.[i]));
      const pick = names.findIndex((n) => !this.z.has(n));
      if (pick < 0) throw new SleepSetBlocked(index);
      node = { names, fps, sleep: this.z, done: new Map(), chosen: pick };
      this.path.push(node);
    }
    const c = node.chosen;
    const fp = node.fps[c];
    // Asleep after this step: what was asleep here or explored here before, and commutes with it.
    const next = new Map<string, Footprint | undefined>();
    for (const [n, f] of node.sleep) if (!conflicts(f, fp)) next.set(n, f);
    for (const [n, f] of node.done) if (!conflicts(f, fp)) next.set(n, f);
    this.z = next;
    this.chosen.push(c);
    this.arities.push(labels.length);
    return c;
  }

  freeStep(label: string, footprint: Footprint | undefined): void {
    if (this.z.size === 0) return;
    const name = taskOf(label);
    // The only task that can run is asleep: this run would repeat an explored order.
    if (this.z.has(name)) throw new SleepSetBlocked(this.chosen.length);
    const fp = this.declared(footprint);
    for (const [n, f] of this.z) if (conflicts(f, fp)) this.z.delete(n);
  }
}

/**
 * Moves the path to the next unexplored branch: the deepest decision with a
 * candidate neither explored there nor asleep there. False when none is left.
 */
export function backtrackSleep(path: SleepNode[]): boolean {
  while (path.length > 0) {
    const n = path[path.length - 1]!;
    n.done.set(n.names[n.chosen]!, n.fps[n.chosen]);
    const next = n.names.findIndex((name) => !n.done.has(name) && !n.sleep.has(name));
    if (next >= 0) {
      n.chosen = next;
      return true;
    }
    path.pop();
  }
  return false;
}
