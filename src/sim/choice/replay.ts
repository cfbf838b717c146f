import type { ChoiceRecord, ChoiceSource } from './source.js';

/** Thrown when a replay meets a decision that differs from the recording. */
export class ReplayDivergenceError extends Error {
  constructor(
    readonly index: number,
    readonly expected: readonly string[] | undefined,
    readonly actual: readonly string[],
  ) {
    super(
      `replay diverged at choice #${index}: recorded candidates ${JSON.stringify(expected ?? 'none (recording ended)')}, ` +
        `but the run offered ${JSON.stringify(actual)} — the model or its inputs changed, or something in it is nondeterministic`,
    );
    this.name = 'ReplayDivergenceError';
  }
}

/**
 * Replays a recorded schedule exactly. Every decision must offer the same
 * candidate labels as when it was recorded; any difference is reported as
 * divergence (hidden nondeterminism, or a changed model) instead of silently
 * running a different interleaving.
 */
export class ReplayChoice implements ChoiceSource {
  readonly name = 'replay';
  constructor(readonly records: readonly ChoiceRecord[]) {}
  choose(labels: readonly string[], index: number): number {
    const r = this.records[index];
    if (r === undefined || r.of.length !== labels.length || r.of.some((l, i) => l !== labels[i])) {
      throw new ReplayDivergenceError(index, r?.of, labels);
    }
    return r.chosen;
  }
}
