/**
 * The "first failure" cell of every check table (built-in claims, services,
 * apps, clients), so the three commands say one thing. A random or PCT
 * campaign counts runs; an exhaustive search counts schedules — the 1-based
 * index of the failing schedule in the search's order, across its small
 * scenarios, which is also the number of schedules it ran, since it stops
 * there. The milliseconds, when known, are wall time from the start of the
 * campaign to that failure, before minimising. `--json` carries the same two
 * numbers as `firstFailureRun` and `firstFailureMs`.
 *
 * @example firstFailureCell({ firstFailureRun: 2, firstFailureMs: 110.4 }, true) // 'schedule 2, 110 ms'
 */
export function firstFailureCell(r: { firstFailureRun?: number; firstFailureMs?: number }, exhaustive: boolean): string {
  if (r.firstFailureRun === undefined) return '-';
  const ms = r.firstFailureMs === undefined ? '' : `, ${Math.round(r.firstFailureMs)} ms`;
  return `${exhaustive ? 'schedule' : 'run'} ${r.firstFailureRun}${ms}`;
}
