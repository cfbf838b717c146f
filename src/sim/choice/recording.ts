import type { Footprint } from '../footprint.js';
import type { ChoiceRecord, ChoiceSource } from './source.js';

/**
 * Another source's decisions, recorded as the kernel records them, kept
 * when the run throws. The kernel hands its decisions back only with a
 * finished run; a run a service stopped (a request never answered, a limit
 * reached) has none, and its scenario file needs them to replay to the same
 * stop. Used only to run such a case again, never on the hot path.
 */
export class RecordingChoice implements ChoiceSource {
  readonly name: string;
  /** The decisions made so far, in order. */
  readonly records: ChoiceRecord[] = [];
  readonly freeStep?: (label: string, footprint: Footprint | undefined, timeMs: number) => void;

  constructor(private readonly inner: ChoiceSource) {
    this.name = inner.name;
    // Defined only when the inner source reduces: the kernel passes footprints to sources that define it.
    if (inner.freeStep !== undefined) this.freeStep = (label, footprint, timeMs) => inner.freeStep!(label, footprint, timeMs);
  }

  choose(labels: readonly string[], index: number, timeMs: number, continuing: boolean, footprints?: ReadonlyArray<Footprint | undefined>): number {
    const i = this.inner.choose(labels, index, timeMs, continuing, footprints);
    // The kernel builds `labels` afresh for each decision and never changes it (its own log keeps the same array).
    this.records.push({ t: timeMs, chosen: i, of: labels as string[], preempted: continuing && i !== 0 });
    return i;
  }
}
