import type { ChoiceSource } from '../choice/source.js';

/** Thrown when a run does not offer the decisions an earlier run with the same prefix offered. */
export class ExplorationDivergenceError extends Error {
  /**
   * `names`, when known: the tasks an earlier run offered there and this
   * run's (the counts alone can agree: "offered 2 … offered 2" said
   * nothing when a module-level limiter turned one request into another).
   */
  constructor(readonly index: number, readonly expectedArity: number, readonly actualArity: number, readonly prefix: readonly number[], readonly names?: { before: readonly string[]; now: readonly string[] }) {
    super(
      `exhaustive exploration diverged at choice #${index}: an earlier run offered ${names ? `[${names.before.join(', ')}]` : `${expectedArity} candidates`} there, ` +
        `this one offered ${names ? `[${names.now.join(', ')}]` : actualArity} (prefix ${JSON.stringify(prefix)}) — the model is nondeterministic under a fixed schedule`,
    );
    this.name = 'ExplorationDivergenceError';
  }
}

/**
 * The choice source of one exhaustive-exploration run: follows a prefix of
 * choices, then always picks candidate 0, and records every decision's
 * chosen index and arity (number of candidates) so the explorer can
 * backtrack. `expectedArities` (from the run that produced the prefix) turns
 * hidden nondeterminism into an error instead of a silently wrong count.
 */
export class PrefixChoice implements ChoiceSource {
  readonly name = 'exhaustive';
  /** The index chosen at each decision of this run. */
  readonly chosen: number[] = [];
  /** The number of candidates at each decision of this run. */
  readonly arities: number[] = [];

  constructor(
    readonly prefix: readonly number[],
    private readonly expectedArities: readonly number[] = [],
  ) {}

  choose(labels: readonly string[], index: number): number {
    if (index !== this.chosen.length) throw new Error(`PrefixChoice: decision #${index} out of order (expected #${this.chosen.length}); use one PrefixChoice per run`);
    const expected = this.expectedArities[index];
    if (expected !== undefined && expected !== labels.length) throw new ExplorationDivergenceError(index, expected, labels.length, this.prefix);
    const c = index < this.prefix.length ? this.prefix[index]! : 0;
    if (c >= labels.length) throw new ExplorationDivergenceError(index, c + 1, labels.length, this.prefix);
    this.chosen.push(c);
    this.arities.push(labels.length);
    return c;
  }
}
