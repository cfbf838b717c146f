import type { ChoiceSource } from './source.js';

/**
 * Choices from a plain list of integers, each taken modulo the number of
 * candidates; past the end of the list every choice is 0. Candidate 0 is the
 * task that took the last step whenever it can still run (see
 * `Kernel.pick`), so 0 means "no preemption" and any other value, while that
 * task can run, is a preemption. This is the source for fast-check: the list
 * is an `fc.array(fc.nat())`, and shrinking it toward shorter lists and
 * zeros removes preemptions — "simpler" is literally "fewer context
 * switches" — which `fc.scheduler` cannot do.
 */
export class ListChoice implements ChoiceSource {
  readonly name = 'list';
  constructor(readonly list: readonly number[]) {}
  choose(labels: readonly string[], index: number): number {
    const v = index < this.list.length ? this.list[index]! : 0;
    return ((v % labels.length) + labels.length) % labels.length;
  }
}
