/**
 * The run a time budget left behind.
 *
 * fast-check's `interruptAfterTimeLimit` races an async property's run
 * against a timer and, when the timer wins, goes on without it: the run
 * carries on in the background, holding what a simulated run holds for the
 * whole process — the kernel's clock (`Date`, timers, `performance.now`) and
 * the simulation's database. A client campaign stopped by `--time-budget`
 * left its run's clock installed: the next campaign in the process threw
 * "another run's kernel clock is installed", and the CLI read a negative wall
 * time. A campaign settles the abandoned run (it ends within the kernel's
 * limits) before it does anything else, and the run, once abandoned, counts
 * for nothing (not a run, not coverage, not a failure).
 */
export class InFlight {
  private last: Promise<unknown> | undefined;
  private closed = false;

  /** Wraps the property's body: each call is remembered until the next. */
  track<A>(body: (a: A) => Promise<boolean>): (a: A) => Promise<boolean> {
    return (a: A) => {
      const p = body(a);
      this.last = p;
      return p;
    };
  }

  /** True once the campaign has moved on: what the run found is not the campaign's. */
  get abandoned(): boolean {
    return this.closed;
  }

  /** After `fc.check` returns: lets a run it abandoned finish (its outcome ignored). */
  async settle(): Promise<void> {
    this.closed = true;
    await this.last?.then(() => undefined, () => undefined);
    this.last = undefined;
  }
}
