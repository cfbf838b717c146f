import type { ChoiceSource } from '../choice/source.js';

/**
 * The choice source of one run of a preemption-bounded search: follows a
 * prefix, then takes candidate 0 (continue the running task) everywhere, and
 * records each decision's arity and whether choosing anything but 0 there
 * would be a preemption.
 */
class BoundedPrefixChoice implements ChoiceSource {
  readonly name = 'bounded';
  readonly chosen: number[] = [];
  readonly arities: number[] = [];
  readonly continuing: boolean[] = [];
  constructor(private readonly prefix: readonly number[]) {}
  choose(labels: readonly string[], index: number, _t: number, continuing: boolean): number {
    const c = index < this.prefix.length ? this.prefix[index]! : 0;
    // A model that offers fewer candidates under the same prefix is
    // nondeterministic; fall back to 0 rather than index past the list, and
    // let the caller's predicate judge the run it got.
    const pick = c < labels.length ? c : 0;
    this.chosen.push(pick);
    this.arities.push(labels.length);
    this.continuing.push(continuing);
    return pick;
  }
}

/** Options of {@link searchBounded}. */
export interface BoundedSearchOptions<R> {
  /** Highest preemption bound to try (inclusive). */
  preemptionsMax: number;
  /** Upper bound on runs over all bounds; the answer says whether the search was complete. */
  runsMax: number;
  /**
   * A hit already in hand (e.g. the schedule fast-check shrank to): bounds
   * from its preemption count up are not searched when it is already
   * optimal there (as many non-default choices as preemptions), and it is
   * the answer when no bound below it has a hit.
   */
  known?: BoundedHit<R>;
  /**
   * Asked before each run: true stops the search there, as a spent
   * `runsMax` does (incomplete). The caller's limit (a wall-clock shrink
   * budget lives in the CLI), never read by the simulated code.
   */
  stop?: () => boolean;
}

/** A schedule found by {@link searchBounded}. */
export interface BoundedHit<R> {
  /** Choice list (trailing zeros dropped): replay it with `ListChoice`. */
  choices: number[];
  /** Preemptions in the schedule. */
  preemptions: number;
  /** Non-default choices (entries ≠ 0): free choices plus preemptions. */
  decisions: number;
  result: R;
}

/** What {@link searchBounded} found. */
export interface BoundedSearchResult<R> {
  /** The matching schedule with the fewest preemptions, then the fewest non-default choices, then the shortest list. */
  best?: BoundedHit<R>;
  /** Runs made. */
  runs: number;
  /**
   * True when every schedule with fewer preemptions than `best` (or, with no
   * hit, every schedule within `preemptionsMax`) was run: then `best` is
   * minimal in preemptions, and among those in non-default choices.
   */
  complete: boolean;
}

function trimmed(xs: readonly number[]): number[] {
  let n = xs.length;
  while (n > 0 && xs[n - 1] === 0) n--;
  return xs.slice(0, n);
}

/**
 * Iterative preemption bounding (Musuvathi & Qadeer, "Iterative Context
 * Bounding for Systematic Testing of Multithreaded Programs", PLDI 2007 —
 * CHESS): for bound b = 0, 1, 2 … enumerate, depth first, every schedule
 * with at most b preemptions, and stop at the first bound where some run
 * matches `isHit`. Within that bound every schedule is still run, and the
 * one with the fewest non-default choices is kept, so the answer is minimal
 * first in preemptions, then in decisions. Free choices (when the running
 * task cannot continue) cost no preemption and are all explored.
 *
 * `run` must build a fresh model on the given source and be deterministic
 * apart from it.
 *
 * @example
 * const r = await searchBounded((choices) => runScenario(s, { choices }), (x) => x.violations.length > 0, { preemptionsMax: 3, runsMax: 5000 });
 * // r.best?.preemptions is the fewest preemptions any failing schedule of s needs
 */
export async function searchBounded<R>(
  run: (choices: ChoiceSource) => Promise<R>,
  isHit: (result: R) => boolean,
  opts: BoundedSearchOptions<R>,
): Promise<BoundedSearchResult<R>> {
  let runs = 0;
  const known = opts.known;
  // decisions >= preemptions always, so a known hit with equal counts cannot be beaten within its own bound.
  const top = known === undefined ? opts.preemptionsMax : Math.min(opts.preemptionsMax, known.preemptions - (known.decisions === known.preemptions ? 1 : 0));
  for (let bound = 0; bound <= top; bound++) {
    let best: BoundedHit<R> | undefined;
    let prefix: number[] = [];
    for (;;) {
      if (runs >= opts.runsMax || opts.stop?.() === true) return { ...(best ? { best } : {}), runs, complete: false };
      const src = new BoundedPrefixChoice(prefix);
      const result = await run(src);
      runs++;
      const { chosen, arities, continuing } = src;
      if (isHit(result)) {
        const choices = trimmed(chosen);
        const preemptions = chosen.reduce((n, c, i) => n + (continuing[i] && c !== 0 ? 1 : 0), 0);
        const decisions = choices.filter((c) => c !== 0).length;
        // Every hit in this bound has exactly `bound` preemptions (a lower
        // bound had none), so only the non-default choices and length compare.
        if (best === undefined || decisions < best.decisions || (decisions === best.decisions && choices.length < best.choices.length)) {
          best = { choices, preemptions, decisions, result };
        }
        // No schedule in this bound has fewer non-default choices than preemptions.
        if (best !== undefined && best.decisions === bound) break;
      }
      const next = nextBounded(chosen, arities, continuing, bound);
      if (next === undefined) break;
      prefix = next;
    }
    // Every schedule within this bound was run (or the hit is optimal): a hit here is minimal.
    if (best !== undefined) return { best, runs, complete: true };
  }
  return { ...(known ? { best: known } : {}), runs, complete: true };
}

/**
 * The depth-first successor within a preemption bound: the deepest decision
 * with an untried candidate whose choice keeps the prefix within `bound`
 * preemptions, incremented; everything after it is dropped (later decisions
 * default to 0, which adds no preemption). Undefined when none is left.
 */
export function nextBounded(chosen: readonly number[], arities: readonly number[], continuing: readonly boolean[], bound: number): number[] | undefined {
  // Preemptions used by the prefix before each decision.
  const before: number[] = [];
  let used = 0;
  for (let i = 0; i < chosen.length; i++) {
    before.push(used);
    if (continuing[i] && chosen[i] !== 0) used++;
  }
  for (let j = chosen.length - 1; j >= 0; j--) {
    const x = chosen[j]! + 1;
    if (x >= arities[j]!) continue;
    // Any x >= 1 at a decision where the running task could continue is a preemption.
    if (before[j]! + (continuing[j] ? 1 : 0) > bound) continue;
    const next = chosen.slice(0, j + 1);
    next[j] = x;
    return next;
  }
  return undefined;
}
