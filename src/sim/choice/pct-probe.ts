import type { ChoiceSource } from './source.js';

/**
 * Measures a model for PCT: runs the default schedule (always candidate 0,
 * "continue the running task") and counts the steps taken at every virtual
 * instant where the kernel had to decide at least once. That count bounds
 * the decisions any schedule of the same steps can make (a decision only
 * happens at an instant where two tasks can run, and each takes a step),
 * which is the k PCT's guarantee needs — the probe's own decision count
 * does not: a preempted task stays runnable beside the other and doubles
 * the decisions of a two-task race.
 */
export class PctProbe implements ChoiceSource {
  readonly name = 'pct-probe';
  private t = Number.NaN;
  private stepsNow = 0;
  private decidedNow = false;
  /** Steps at instants with a decision, so far (see {@link PctProbe.steps}). */
  private counted = 0;

  choose(_labels: readonly string[], _index: number, timeMs: number): number {
    this.at(timeMs);
    this.decidedNow = true;
    return 0;
  }

  freeStep(_label: string, _fp: unknown, timeMs: number): void {
    this.at(timeMs);
  }

  /** k for PCT: the steps taken at instants where the kernel decided. */
  get steps(): number {
    return this.counted + (this.decidedNow ? this.stepsNow : 0);
  }

  private at(timeMs: number): void {
    if (timeMs !== this.t) {
      if (this.decidedNow) this.counted += this.stepsNow;
      this.t = timeMs;
      this.stepsNow = 0;
      this.decidedNow = false;
    }
    this.stepsNow++;
  }
}
