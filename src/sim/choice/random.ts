import { Prng } from '../../random/prng.js';
import type { ChoiceSource } from './source.js';

/** Uniformly random choices from a seeded generator. */
export class RandomChoice implements ChoiceSource {
  readonly name = 'random';
  private readonly rng: Prng;
  constructor(seed: number) {
    this.rng = new Prng(seed).fork('choices');
  }
  choose(labels: readonly string[]): number {
    return this.rng.int(labels.length);
  }
}
