import type { RunResult } from '../sim/kernel.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import type { RecoveryOutcome } from '../checkers/progress.js';
import type { OperationEnd, Violation } from '../checkers/invariants.js';
import type { Scenario } from './schema.js';
import type { RunObserver } from './observe.js';
import type { ServiceDb, ServiceDefinition } from '../service/definition.js';
import { runServiceScenario } from '../service/run.js';
import { serviceOf } from './service-of.js';
import type { Reached } from '../service/reached.js';
import { plural } from '../service/noun.js';

/** Options of {@link runScenario}. */
export interface RunOptions {
  /** Override the schedule: default is the file's schedule (replay) or, if empty, the seed. */
  choices?: ChoiceSource;
  /** Keep trace entries (for `--trace`); the hash is computed unless `hashTrace` is false. */
  keepTrace?: boolean;
  /**
   * Hash the trace (default true). Campaign scans turn it off: a scan only
   * needs the verdict, and encoding and hashing every event is a tenth of a
   * run's cost; a failure is re-run with the trace before it is saved.
   */
  hashTrace?: boolean;
  /**
   * Look at the database the run left behind (after the recovery phase),
   * before the next run reuses it: tests and the exploration bench read
   * rows here. Runs share one cached connection per schema, so the
   * database is only valid inside this call.
   */
  inspect?: (db: ServiceDb) => void;
  /** Shown in limit/deadlock errors. */
  replayHint?: string;
  /**
   * Replay the file's schedule as a contract even when it is empty (then the
   * run must make no decision at all). Default: an empty schedule means
   * "decisions come from the seed", for scenarios built in code.
   */
  strictReplay?: boolean;
  /**
   * Watch the run step by step: every trace entry with the store, every
   * request as it is sent (the HTML stepper). Off by default; an unobserved
   * run uses the plain trace and transports, so this costs nothing when off.
   */
  observe?: RunObserver;
  /**
   * The user service to host when the scenario names a module (default: the
   * one loaded from that module path, see `loadService`).
   */
  service?: ServiceDefinition;
  /**
   * Count the situations this run reaches into this set (coverage: faults
   * fired, same-key overlaps, preemptions between declared steps, replays,
   * recovery, time span, the service's own `sim.reached`). Campaigns pass
   * a fresh one per run; without it nothing is counted.
   */
  reached?: Reached;
}

/** Everything a run produced. */
export interface ScenarioRun {
  reports: Record<string, number>;
  violations: Violation[];
  /** Per operation: attempts and each worker's final result. */
  operations: OperationEnd[];
  result: RunResult;
  trace: string[];
  /**
   * The recovery phase (invariant 5): per operation that had not succeeded,
   * how its resubmission after the faults stopped ended. Not part of the
   * main run's trace, schedule or hash.
   */
  recovery: Map<string, RecoveryOutcome>;
  /** The recovery phase's own trace lines (with `keepTrace`). */
  recoveryTrace: string[];
  /**
   * Processes of a user's service that crashed in the main run: which, and
   * why (`unhandled rejection: Error: … (at file:line)`, Node's crash on a
   * rejection nothing handled); absent or empty: none.
   */
  crashes?: Array<{ instance: string; cause: string }>;
}

/**
 * Whether a run's outcome matches the scenario's `expect`. `noun` is what
 * one effect is called in the problems (the service's `effects.noun`;
 * default `report`, the built-in tracker's).
 */
export function matchesExpect(s: Scenario, run: Pick<ScenarioRun, 'reports' | 'violations'>, noun = 'report'): { ok: boolean; problems: string[] } {
  const problems: string[] = [];
  for (const [op, n] of Object.entries(s.expect.reports ?? {})) {
    if (run.reports[op] !== n) problems.push(`operation ${op}: expected ${n} ${n === 1 ? noun : plural(noun)}, got ${run.reports[op]}`);
  }
  const got = [...new Set(run.violations.map((v) => v.invariant))].sort();
  const want = [...new Set(s.expect.violations)].sort();
  if (got.join(',') !== want.join(',')) {
    problems.push(`expected violations [${want.join(', ')}], got [${got.join(', ')}]`);
  }
  return { ok: problems.length === 0, problems };
}

/**
 * Runs one scenario on the kernel: the scenario's service — a built-in
 * tracker variant or a user's module, both {@link ServiceDefinition}s hosted
 * through the same service API — on one SQLite database, the simulated
 * network, and one retrying client task per worker. Returns the checkers'
 * verdicts (judged through the service's declared effects), the schedule
 * that was taken and the trace hash.
 */
export async function runScenario(s: Scenario, opts: RunOptions = {}): Promise<ScenarioRun> {
  return runServiceScenario(s, serviceOf(s, opts.service), opts);
}
