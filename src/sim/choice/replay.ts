import type { ChoiceRecord, ChoiceSource } from './source.js';

/** Why a replay stopped following its recording. */
export type DivergenceKind = 'candidates' | 'time' | 'extra-decision' | 'unused-decisions' | 'preemption';

/** Thrown when a replay meets a decision that differs from the recording. */
export class ReplayDivergenceError extends Error {
  /** Trace lines of the run up to the divergence, when the runner kept them. */
  trace: string[] = [];

  constructor(
    /** 0-based index of the first decision that differs. */
    readonly index: number,
    readonly kind: DivergenceKind,
    /** The recorded decision at that index (undefined past the end of the recording). */
    readonly expected: ChoiceRecord | undefined,
    /** What the run offered there (undefined when the run made fewer decisions). */
    readonly actual: { t: number; of: readonly string[]; preempted?: boolean } | undefined,
  ) {
    super(`replay diverged at choice #${index}: ${describe(kind, index, expected, actual)}`);
    this.name = 'ReplayDivergenceError';
  }

  /** Plain data for `--json`. */
  toJSON(): Record<string, unknown> {
    return {
      index: this.index,
      kind: this.kind,
      message: this.message,
      expected: this.expected ?? null,
      // Test runners (vitest) overwrite `actual` and `expected` with printed strings for their diff before serializing; keep whatever is there.
      actual: this.actual && typeof this.actual === 'object' && Array.isArray(this.actual.of) ? { ...this.actual, of: [...this.actual.of] } : (this.actual ?? null),
    };
  }
}

function describe(kind: DivergenceKind, index: number, e: ChoiceRecord | undefined, a: ReplayDivergenceError['actual']): string {
  const tail = ' — the model or its inputs changed, the file was edited, or something in the model is nondeterministic';
  switch (kind) {
    case 'extra-decision':
      return `the recorded schedule ends after ${index} decision(s), but the run made another at t=${a?.t} ms among ${JSON.stringify(a?.of)}${tail}`;
    case 'unused-decisions':
      return `the run made only ${index} decision(s), but the recorded schedule has more, from #${index} (t=${e?.t} ms among ${JSON.stringify(e?.of)})${tail}`;
    case 'time':
      return `recorded at t=${e?.t} ms, but the run reached it at t=${a?.t} ms (candidates ${JSON.stringify(a?.of)})${tail}`;
    case 'preemption':
      return `recorded preempted=${e?.preempted}, but choosing candidate ${e?.chosen} there is preempted=${a?.preempted}${tail}`;
    case 'candidates':
      return `recorded candidates ${JSON.stringify(e?.of)}, but the run offered ${JSON.stringify(a?.of)}${tail}`;
  }
}

/**
 * Replays a recorded schedule exactly: a schedule is authoritative. Every
 * decision must come at the recorded virtual time and offer the same
 * candidate labels; a decision past the end of the recording is divergence
 * too (an empty schedule means "this run makes no decisions"). After the run,
 * {@link ReplayChoice.finish} reports recorded decisions the run never reached
 * and recorded preemption flags that do not match. Nothing silently runs a
 * different interleaving.
 */
export class ReplayChoice implements ChoiceSource {
  readonly name = 'replay';
  constructor(readonly records: readonly ChoiceRecord[]) {}

  choose(labels: readonly string[], index: number, timeMs: number): number {
    const r = this.records[index];
    if (r === undefined) throw new ReplayDivergenceError(index, 'extra-decision', undefined, { t: timeMs, of: [...labels] });
    if (r.of.length !== labels.length || r.of.some((l, i) => l !== labels[i])) {
      throw new ReplayDivergenceError(index, 'candidates', r, { t: timeMs, of: [...labels] });
    }
    if (r.t !== timeMs) throw new ReplayDivergenceError(index, 'time', r, { t: timeMs, of: [...labels] });
    return r.chosen;
  }

  /**
   * Checks a finished run's decisions against the whole recording: every
   * recorded decision used, every preemption flag equal. Throws
   * {@link ReplayDivergenceError} at the first difference.
   */
  finish(made: readonly ChoiceRecord[]): void {
    for (let i = 0; i < Math.min(made.length, this.records.length); i++) {
      const r = this.records[i]!;
      const m = made[i]!;
      if (r.preempted !== m.preempted) throw new ReplayDivergenceError(i, 'preemption', r, { t: m.t, of: m.of, preempted: m.preempted });
    }
    if (made.length < this.records.length) {
      throw new ReplayDivergenceError(made.length, 'unused-decisions', this.records[made.length], undefined);
    }
  }
}
