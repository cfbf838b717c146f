import type { ChoiceSource } from '../choice/source.js';
import type { Footprint } from '../footprint.js';
import { PrefixChoice } from './prefix.js';
import { backtrackSleep, SleepSetBlocked, SleepSetChoice, type SleepNode } from './sleep-sets.js';

/** One explored schedule, as passed to {@link ExploreOptions.onSchedule}. */
export interface ExploredSchedule<R> {
  /** 0-based number of this schedule in the enumeration order. */
  index: number;
  /** The choice at every decision of the run (replay with `ListChoice`). */
  choices: number[];
  /** The number of candidates at every decision. */
  arities: number[];
  result: R;
}

/** Options of {@link exploreAll}. */
export interface ExploreOptions<R> {
  /** Stop after this many schedules; the answer then has `complete: false`. */
  schedulesMax: number;
  /** Called after every schedule; return `false` to stop the enumeration early. */
  onSchedule?: (s: ExploredSchedule<R>) => void | boolean;
  /**
   * Which schedules to keep in {@link ExploreResult.results}. Default: all.
   * Pass e.g. `(r) => r.violations.length > 0` so a large enumeration keeps
   * only its failures in memory.
   */
  keep?: (result: R, choices: readonly number[]) => boolean;
  /**
   * Partial-order reduction with sleep sets (default false): run one order
   * of steps that commute — by the footprints the model declares where its
   * tasks park — instead of all of them. Every Mazurkiewicz trace (class of
   * schedules equal up to swapping adjacent independent steps) is still run,
   * exactly once, so every reachable end state is reached; `schedules` then
   * counts traces, not interleavings. Steps without a declared footprint
   * conflict with everything, so an unannotated model is explored in full.
   */
  reduce?: boolean;
  /**
   * With `reduce`: a filter over every declared footprint before it is used.
   * For tests that plant a wrong declaration and watch the reduction lose
   * end states; leave it unset otherwise.
   */
  footprints?: (fp: Footprint | undefined) => Footprint | undefined;
}

/** What an enumeration found. */
export interface ExploreResult<R> {
  /** Number of distinct schedules run. */
  schedules: number;
  /** True when every schedule was run (neither `schedulesMax` nor `onSchedule` stopped it). */
  complete: boolean;
  /** The longest schedule seen, in decisions. */
  decisionsMax: number;
  /** The kept schedules (see {@link ExploreOptions.keep}), in enumeration order. */
  results: Array<{ choices: number[]; result: R }>;
  /** With `reduce`: runs abandoned part-way because they could only repeat an explored trace (0 without). */
  blocked: number;
}

/**
 * Runs every schedule of a deterministic model once: a depth-first
 * enumeration of the tree of kernel decisions. Each run follows a prefix of
 * choices and then picks candidate 0 everywhere, recording each decision's
 * arity; the next prefix increments the deepest decision that still has an
 * untried candidate. Every run ends at a different leaf, so `schedules`
 * counts distinct schedules exactly (two different choice lists can still
 * reach the same end state — no reduction is attempted: the kernel shows a
 * decision's candidate labels, not the model's state, so merging runs on
 * equal labels would not be sound).
 *
 * `run` must build a fresh model on the given source and be deterministic
 * apart from it (same seed every time); a run that offers different
 * candidates under the same prefix raises {@link ExplorationDivergenceError}.
 *
 * @example
 * const s = canonicalScenario('concurrent_duplicate', { variant: 'key_atomic', keySource: 'tool_call' });
 * const e = await exploreAll((choices) => runScenario(s, { choices }), {
 *   schedulesMax: 10_000,
 *   keep: (r) => r.violations.length > 0,
 * });
 * // e.complete && e.results.length === 0: the invariants hold on every schedule
 */
export async function exploreAll<R>(run: (choices: ChoiceSource) => Promise<R>, opts: ExploreOptions<R>): Promise<ExploreResult<R>> {
  if (!(Number.isInteger(opts.schedulesMax) && opts.schedulesMax >= 0)) {
    throw new RangeError(`exploreAll: schedulesMax must be an integer >= 0, got ${opts.schedulesMax}`);
  }
  if (opts.reduce) return exploreReduced(run, opts);
  const keep = opts.keep ?? (() => true);
  const results: Array<{ choices: number[]; result: R }> = [];
  let prefix: number[] = [];
  let arities: number[] = [];
  let schedules = 0;
  let decisionsMax = 0;
  for (;;) {
    if (schedules >= opts.schedulesMax) return { schedules, complete: false, decisionsMax, results, blocked: 0 };
    const source = new PrefixChoice(prefix, arities);
    const result = await run(source);
    if (source.chosen.length < prefix.length) {
      throw new Error(`exploreAll: the run made ${source.chosen.length} decisions but the prefix has ${prefix.length} — the model is nondeterministic under a fixed schedule`);
    }
    const index = schedules++;
    const choices = source.chosen;
    decisionsMax = Math.max(decisionsMax, choices.length);
    if (keep(result, choices)) results.push({ choices: [...choices], result });
    const goOn = opts.onSchedule?.({ index, choices: [...choices], arities: [...source.arities], result });
    const next = nextPrefix(choices, source.arities);
    if (next === undefined) return { schedules, complete: true, decisionsMax, results, blocked: 0 };
    if (goOn === false) return { schedules, complete: false, decisionsMax, results, blocked: 0 };
    prefix = next;
    arities = source.arities.slice(0, next.length);
  }
}

/** {@link exploreAll} with sleep sets: the path of decisions lives in {@link SleepNode}s. */
async function exploreReduced<R>(run: (choices: ChoiceSource) => Promise<R>, opts: ExploreOptions<R>): Promise<ExploreResult<R>> {
  const keep = opts.keep ?? (() => true);
  const results: Array<{ choices: number[]; result: R }> = [];
  const path: SleepNode[] = [];
  let schedules = 0;
  let blocked = 0;
  let decisionsMax = 0;
  for (;;) {
    if (schedules >= opts.schedulesMax) return { schedules, complete: false, decisionsMax, results, blocked };
    const source = new SleepSetChoice(path, opts.footprints);
    let result: R;
    try {
      result = await run(source);
    } catch (e) {
      if (!(e instanceof SleepSetBlocked)) throw e;
      blocked++;
      // Everything reachable from here is reachable by an order already explored.
      path.length = Math.min(path.length, e.index);
      if (!backtrackSleep(path)) return { schedules, complete: true, decisionsMax, results, blocked };
      continue;
    }
    if (source.chosen.length < path.length) {
      throw new Error(`exploreAll: the run made ${source.chosen.length} decisions but the path has ${path.length} — the model is nondeterministic under a fixed schedule`);
    }
    const index = schedules++;
    const choices = source.chosen;
    decisionsMax = Math.max(decisionsMax, choices.length);
    if (keep(result, choices)) results.push({ choices: [...choices], result });
    const goOn = opts.onSchedule?.({ index, choices: [...choices], arities: [...source.arities], result });
    if (!backtrackSleep(path)) return { schedules, complete: true, decisionsMax, results, blocked };
    if (goOn === false) return { schedules, complete: false, decisionsMax, results, blocked };
  }
}

/**
 * The depth-first successor of a schedule: the deepest decision with an
 * untried candidate, incremented, with everything after it dropped (so the
 * next run takes candidate 0 there). Undefined when the tree is exhausted.
 */
export function nextPrefix(choices: readonly number[], arities: readonly number[]): number[] | undefined {
  for (let j = choices.length - 1; j >= 0; j--) {
    if (choices[j]! + 1 < arities[j]!) {
      const next = choices.slice(0, j + 1);
      next[j] = choices[j]! + 1;
      return next;
    }
  }
  return undefined;
}
