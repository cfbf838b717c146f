import type { Footprint } from '../footprint.js';

/**
 * Where the kernel's decisions come from. Whenever more than one task could
 * run next, the kernel calls {@link ChoiceSource.choose} with the candidates'
 * labels (the task that just ran first, when it can continue; then the others
 * in the order they became runnable) and runs the one whose index is
 * returned. Sources are interchangeable: seeded random, an explicit list,
 * a fast-check generated list, PCT, or an exhaustive enumerator.
 */
export interface ChoiceSource {
  /** A short name for banners and scenario files, e.g. `random`, `list`. */
  readonly name: string;
  /**
   * @param labels candidate labels, length >= 2
   * @param index how many choices were made before this one in this run
   * @param timeMs virtual time of the decision
   * @param continuing true when `labels[0]` is the task that took the last
   *   step and can continue: then any choice but 0 is a preemption
   * @param footprints what each candidate's step may touch (undefined:
   *   everything), passed only to sources that define {@link ChoiceSource.freeStep}
   * @returns an integer in [0, labels.length)
   */
  choose(labels: readonly string[], index: number, timeMs: number, continuing: boolean, footprints?: ReadonlyArray<Footprint | undefined>): number;
  /**
   * Optional, for sources that reduce (partial-order reduction): told of
   * every step the kernel takes without a choice (one task runnable), with
   * its declared footprint. It may throw to abandon the run. A source that
   * defines it also receives footprints in {@link ChoiceSource.choose}.
   */
  freeStep?(label: string, footprint: Footprint | undefined, timeMs: number): void;
}

/** A decision as recorded in the trace and in scenario files. */
export interface ChoiceRecord {
  /** virtual time of the decision */
  t: number;
  /** index of the chosen candidate */
  chosen: number;
  /**
   * Labels of all candidates, so a person can follow the schedule. When the
   * task that took the last step can still run, it is `of[0]`: choosing 0
   * lets it continue.
   */
  of: string[];
  /** True when the choice switched away from a task that could have continued (a preemption). */
  preempted: boolean;
}
