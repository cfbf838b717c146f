import type { ChoiceSource } from './source.js';

/**
 * Choices from a plain list of integers, each taken modulo the number of
 * candidates; past the end of the list every choice is 0 (run the task that
 * became runnable first). This is the source for fast-check: the list is an
 * `fc.array(fc.nat())`, and because shorter lists and smaller numbers mean
 * "more default-ordered", shrinking the list shrinks the interleaving —
 * which `fc.scheduler` cannot do.
 */
export class ListChoice implements ChoiceSource {
  readonly name = 'list';
  constructor(readonly list: readonly number[]) {}
  choose(labels: readonly string[], index: number): number {
    const v = index < this.list.length ? this.list[index]! : 0;
    return ((v % labels.length) + labels.length) % labels.length;
  }
}
