/**
 * The verdict words and exit codes every campaign shares (check, merge,
 * check --service, check --client): one place, so a table, `--json` and the
 * exit code cannot drift apart (DESIGN invariant 8).
 */

/**
 * `holds`: every run (schedule) asked for ran and none failed. `fails`: a
 * run failed. `inconclusive`: none failed, but fewer ran than asked — a
 * time budget or a schedule limit stopped the search — so it is not a
 * "holds" (DESIGN invariant 9).
 */
export type Verdict = 'holds' | 'fails' | 'inconclusive';

/** Exit codes across the CLI. */
export const EXIT = {
  ok: 0,
  /** A verdict other than the expected one (a claim fails, an expect is not met). */
  unexpected: 1,
  /** Bad input: a flag, a file, a module. */
  badInput: 2,
  /** Replay divergence. */
  divergence: 3,
  /** A verdict from fewer runs or schedules than asked, nothing else wrong. */
  inconclusive: 4,
} as const;

/** How much of what was asked a search did, when it stopped short. */
export interface Shortfall {
  /** Runs (or schedules) done. */
  done: number;
  /** Asked for; null: "as many as fit" (a time budget alone), where fewer than one is short. */
  asked: number | null;
  unit: 'runs' | 'schedules';
  /** What stopped it, e.g. `time budget 1 ms`, `schedule limit 20 per scenario`. */
  stoppedBy: string;
}

/**
 * The verdict of a search that found no failure: `holds` when it did all it
 * was asked (`complete`), else `inconclusive`.
 */
export function verdictWithoutFailure(complete: boolean): Verdict {
  return complete ? 'holds' : 'inconclusive';
}

/** One sentence for a {@link Shortfall}: `inconclusive: 0 of 100000 runs (stopped by time budget 1 ms)`. */
export function shortfallText(s: Shortfall): string {
  // A schedule limit is per small scenario, so the total done is not "of" it.
  const of = s.asked === null || s.unit === 'schedules' ? `${s.done} ${s.unit}` : `${s.done} of ${s.asked} ${s.unit}`;
  return `inconclusive: ${of} (stopped by ${s.stoppedBy}); no failure found, but the search did not finish`;
}

/**
 * The exit code of several judged rows: 1 when any row is unexpected for a
 * reason other than being inconclusive, else 4 when any is inconclusive,
 * else 0.
 */
export function exitCodeOf(rows: ReadonlyArray<{ ok: boolean; inconclusive: boolean }>): number {
  if (rows.some((r) => !r.ok && !r.inconclusive)) return EXIT.unexpected;
  if (rows.some((r) => r.inconclusive)) return EXIT.inconclusive;
  return EXIT.ok;
}
