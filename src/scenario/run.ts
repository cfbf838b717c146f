import { Kernel, type RunResult } from '../sim/kernel.js';
import { Trace } from '../sim/trace.js';
import { ReplayChoice, ReplayDivergenceError } from '../sim/choice/replay.js';
import { RandomChoice } from '../sim/choice/random.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { openStore } from '../tracker/store.js';
import { TrackerInstance } from '../tracker/instance.js';
import type { Variant } from '../tracker/strategy.js';
import type { TrackerRequest } from '../tracker/messages.js';
import { usesLease } from '../tracker/variants.js';
import { checkProgress, type RecoveryOutcome } from '../checkers/progress.js';
import { clockSkewMs, recoveryTimeoutMs, runRecovery } from './recovery.js';
import { SimNetwork, SimServer } from '../net/sim-network.js';
import { planWorkers } from './workers.js';
import { checkInvariants, type OperationEnd, type Violation } from '../checkers/invariants.js';
import type { Scenario } from './schema.js';
import { ObservedTrace, observedTransport, type RunObserver } from './observe.js';
import type { ServiceDb, ServiceDefinition } from '../service/definition.js';
import { runServiceScenario } from '../service/run.js';
import { serviceOf } from './service-of.js';
import { trackerService } from '../tracker/service.js';

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
  /** @internal Run a built-in variant on the pre-port path (TrackerInstance), to hold the port equal to it. */
  legacyTracker?: boolean;
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
}

/** Whether a run's outcome matches the scenario's `expect`. */
export function matchesExpect(s: Scenario, run: ScenarioRun): { ok: boolean; problems: string[] } {
  const problems: string[] = [];
  for (const [op, n] of Object.entries(s.expect.reports ?? {})) {
    if (run.reports[op] !== n) problems.push(`operation ${op}: expected ${n} report(s), got ${run.reports[op]}`);
  }
  const got = [...new Set(run.violations.map((v) => v.invariant))].sort();
  const want = [...new Set(s.expect.violations)].sort();
  if (got.join(',') !== want.join(',')) {
    problems.push(`expected violations [${want.join(', ')}], got [${got.join(', ')}]`);
  }
  return { ok: problems.length === 0, problems };
}

/**
 * Runs one scenario on the kernel: tracker instances on one SQLite database,
 * the simulated network, and one retrying client task per worker. Returns
 * the checkers' verdicts, the schedule that was taken and the trace hash.
 */
export async function runScenario(s: Scenario, opts: RunOptions = {}): Promise<ScenarioRun> {
  if (s.service.module !== undefined || !opts.legacyTracker) return runServiceScenario(s, serviceOf(s, opts.service), opts);
  return runLegacy(s, opts);
}

async function runLegacy(s: Scenario, opts: RunOptions = {}): Promise<ScenarioRun> {
  const choices = opts.choices ?? (s.schedule.length > 0 || opts.strictReplay ? new ReplayChoice(s.schedule) : new RandomChoice(s.seed));
  const store = openStore(':memory:');
  const obs = opts.observe;
  const kernel = new Kernel({
    seed: s.seed,
    choices,
    trace: obs !== undefined ? new ObservedTrace(opts.keepTrace ?? false, obs, store.db) : opts.hashTrace === false && !opts.keepTrace ? false : new Trace(opts.keepTrace ?? false),
    eventsMax: 200_000,
    timeMsMax: 3_600_000,
    replayHint: opts.replayHint ?? `retrysim replay <file> (scenario '${s.name}', seed ${s.seed})`,
  });
  store.reset();
  try {
    const instances: TrackerInstance[] = [];
    const servers = Array.from({ length: s.service.instances }, (_, i) => new SimServer(i, instances[i] = new TrackerInstance({
      name: `s${i}`,
      variant: s.service.variant as Variant,
      db: store,
      leaseMs: s.service.leaseMs,
      clientTimeoutMs: recoveryTimeoutMs(s),
      allowUnsafeLease: s.service.allowUnsafeLease,
      completedTtlMs: s.service.completedTtlMs,
      // Counters are per instance; the scenario's faults arm instance 0 (the
      // first to be hit under round-robin), so a fault fires once, not once per instance.
      faults: {
        loseResponseAfterCommit: i === 0 ? s.faults.loseResponseAfterCommit : 0,
        crashMidRequest: i === 0 ? s.faults.crashMidRequest : 0,
        slowMs: s.faults.slowMs,
        pause: i === 0 ? s.faults.pause : undefined,
        clockOffsetMs: s.service.clockOffsetMs[i] ?? 0,
      },
    })));
    const net = new SimNetwork(kernel, servers, kernel.fork('net'), s.network, s.faults.kill);
    const { ends, workers } = planWorkers(s);
    // Each operation's last request, for the recovery phase to resubmit verbatim.
    const lastRequests = new Map<string, TrackerRequest>();
    for (const w of workers) {
      const rng = kernel.fork(w.rngLabel);
      const opId = ends[w.opIndex]!.id;
      const wire = net.transport(w.name);
      const transport = { send: (req: TrackerRequest, timeoutMs: number) => (lastRequests.set(opId, req), wire.send(req, timeoutMs)) };
      // Every client step either sleeps or sends: it touches what a send touches.
      const fp = net.clientFootprint;
      kernel.spawn(w.name, async () => {
        if (w.startMs > 0) await kernel.sleep(w.startMs, fp);
        const res = await w.run(obs === undefined ? transport : observedTransport(transport, w.name, obs), { now: () => kernel.now, sleep: (ms) => kernel.sleep(ms, fp), rng });
        const f = res.final;
        kernel.log(w.name, `result ${f.kind}`, f.kind === 'success'
          ? { reportId: f.reportId, replay: f.replay, toolCalls: res.toolCalls.length }
          : { error: f.error, toolCalls: res.toolCalls.length });
      }, { footprint: fp });
    }
    let result: RunResult;
    try {
      result = await kernel.run();
      if (choices instanceof ReplayChoice) choices.finish(result.choices);
    } catch (e) {
      // The run up to the divergence is what a reader needs to see why.
      if (e instanceof ReplayDivergenceError && opts.keepTrace) e.trace = kernel.trace!.lines();
      throw e;
    }
    obs?.end?.(store.db);
    // Invariants 1–4 are judged on the main run's end state, before recovery adds anything.
    const verdict = checkInvariants(store, ends);
    const rec = await runRecovery({ scenario: s, progress: trackerService({ variant: s.service.variant as Variant, leaseMs: s.service.leaseMs }).progress!, instances: instances as never, mainEndMs: result.timeMs, ends, lastRequests, keepTrace: opts.keepTrace ?? false });
    const progress = checkProgress((op) => store.reportIdsForRun(op.runId, op.tenant), ends, rec.outcomes, {
      usesLease: usesLease(s.service.variant as Variant),
      leaseMs: s.service.leaseMs,
      clientTimeoutMs: recoveryTimeoutMs(s),
      slowMs: s.faults.slowMs,
      skewMs: clockSkewMs(s),
    });
    return {
      reports: verdict.reports,
      violations: progress.length === 0 ? verdict.violations : [...verdict.violations, ...progress],
      operations: ends,
      result,
      trace: opts.keepTrace ? kernel.trace!.lines() : [],
      recovery: rec.outcomes,
      recoveryTrace: rec.trace,
    };
  } finally {
    store.close();
  }
}
