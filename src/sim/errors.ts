/** Names the limit that stopped a run, with the seed and how to replay it. */
export class SimLimitError extends Error {
  constructor(
    readonly limit: string,
    readonly value: number,
    readonly timeMs: number,
    readonly seed: number,
    readonly replayHint: string,
  ) {
    super(
      `simulation limit ${limit}=${value} reached at t=${timeMs.toFixed(3)} ms (seed ${seed}). ` +
        `Replay: ${replayHint}`,
    );
    this.name = 'SimLimitError';
  }
}

/** Tasks are blocked and nothing is scheduled that could ever wake them. */
export class DeadlockError extends Error {
  constructor(
    readonly blocked: readonly string[],
    readonly timeMs: number,
    readonly seed: number,
    readonly replayHint: string,
  ) {
    super(
      `deadlock at t=${timeMs.toFixed(3)} ms (seed ${seed}): no event scheduled, ` +
        `blocked tasks: ${blocked.join(', ')}. Replay: ${replayHint}`,
    );
    this.name = 'DeadlockError';
  }
}
