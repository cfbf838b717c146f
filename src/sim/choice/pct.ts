import { Prng } from '../../random/prng.js';
import type { ChoiceSource } from './source.js';

/** Options of {@link PctChoice}. */
export interface PctOptions {
  /** Seed of this run's priorities and change points. */
  seed: number;
  /**
   * Bug depth d >= 1: the number of ordering constraints a bug needs. PCT
   * places d − 1 priority change points. Default 2 (one preemption, which
   * covers atomicity violations such as lost updates).
   */
  depth?: number;
  /**
   * k, an estimate of how many decisions (kernel choices between >= 2
   * candidates) one run makes; change points are drawn among the first k.
   * Too small misses late preemptions; too large wastes change points past
   * the end of the run (the guarantee degrades as 1/k^(d−1)). Default 64.
   */
  stepsEstimate?: number;
}

/**
 * PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi,
 * Nagarakatte: "A Randomized Scheduler with Probabilistic Guarantees of
 * Finding Bugs", ASPLOS 2010), adapted to the kernel's choice interface.
 *
 * Each task (a candidate label up to its last `:`, i.e. the task name) gets a
 * random distinct priority when first seen, all of them at least `depth`; the
 * highest-priority candidate always runs. At d − 1 change points, drawn
 * without repetition among the first `stepsEstimate` decision indices, the
 * task chosen at change point i (i = 1..d−1) drops to priority i, below every
 * initial priority, so it is preempted from the next decision on. For a bug
 * of depth d among n tasks and k decisions, one run finds it with
 * probability at least 1 / (n · k^(d−1)) — a bound that, unlike uniform
 * random scheduling, does not shrink with the length of the tasks.
 *
 * Differences from the paper: steps where only one task can run are not
 * counted (the kernel asks nothing then), so k counts decisions, not steps;
 * n need not be known in advance — a newly seen task is inserted at a uniform
 * random rank among the tasks seen so far, which yields the same uniform
 * random permutation. Use one instance per run (decision indices restart at
 * 0 in every run) and a new seed per run.
 *
 * @example
 * for (let seed = 1; seed <= 1000; seed++) {
 *   const r = await runScenario(s, { choices: new PctChoice({ seed, depth: 2, stepsEstimate: 20 }) });
 *   if (r.violations.length > 0) console.log(`failing seed ${seed}`);
 * }
 */
export class PctChoice implements ChoiceSource {
  readonly name = 'pct';
  readonly depth: number;
  readonly stepsEstimate: number;
  /** The decision indices (0-based, ascending) at which the chosen task is demoted. */
  readonly changePoints: readonly number[];
  private readonly rng: Prng;
  /** Tasks with an initial priority, lowest first; priority = depth + position. */
  private readonly ranked: string[] = [];
  /** Demoted tasks and their priority (1..depth−1). */
  private readonly demoted = new Map<string, number>();
  /** change point index -> its number i (1-based). */
  private readonly changeAt = new Map<number, number>();

  constructor(opts: PctOptions) {
    const depth = opts.depth ?? 2;
    const k = opts.stepsEstimate ?? 64;
    if (!(Number.isInteger(depth) && depth >= 1)) throw new RangeError(`PctChoice: depth must be an integer >= 1, got ${depth}`);
    if (!(Number.isInteger(k) && k >= 1)) throw new RangeError(`PctChoice: stepsEstimate must be an integer >= 1, got ${k}`);
    this.depth = depth;
    this.stepsEstimate = k;
    this.rng = new Prng(opts.seed).fork('pct');
    // Distinct change points (a partial Fisher–Yates over 0..k−1); with
    // fewer indices than change points, the surplus ones could never fire.
    const picks = Math.min(depth - 1, k);
    const pool = Array.from({ length: k }, (_, i) => i);
    for (let i = 0; i < picks; i++) {
      const j = i + this.rng.int(k - i);
      [pool[i], pool[j]] = [pool[j]!, pool[i]!];
      this.changeAt.set(pool[i]!, i + 1);
    }
    this.changePoints = pool.slice(0, picks).sort((a, b) => a - b);
  }

  /** The current priority of a task (by name), or undefined if not seen yet. */
  priority(task: string): number | undefined {
    const d = this.demoted.get(task);
    if (d !== undefined) return d;
    const r = this.ranked.indexOf(task);
    return r < 0 ? undefined : this.depth + r;
  }

  choose(labels: readonly string[], index: number): number {
    // New tasks first, so that the choice sees this decision's final ranks.
    for (const label of labels) {
      const task = taskOf(label);
      if (this.priority(task) === undefined) this.ranked.splice(this.rng.int(this.ranked.length + 1), 0, task);
    }
    const best = this.argmax(labels);
    const i = this.changeAt.get(index);
    if (i !== undefined) {
      // The chosen task still takes this step; it is preempted from the next decision on.
      const task = taskOf(labels[best]!);
      const r = this.ranked.indexOf(task);
      if (r >= 0) this.ranked.splice(r, 1);
      this.demoted.set(task, i);
    }
    return best;
  }

  /** The highest-priority candidate; two candidates with one name (a reused task name) tie, and the earlier-runnable one wins. */
  private argmax(labels: readonly string[]): number {
    let best = 0;
    let bestPriority = -1;
    for (let c = 0; c < labels.length; c++) {
      const p = this.priority(taskOf(labels[c]!))!;
      if (p > bestPriority) {
        best = c;
        bestPriority = p;
      }
    }
    return best;
  }
}

/** The task name of a candidate label `taskName:stepLabel`. */
export function taskOf(label: string): string {
  const i = label.lastIndexOf(':');
  return i < 0 ? label : label.slice(0, i);
}
