import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../random/prng.js';
import type { OperationEnd, Violation } from '../checkers/invariants.js';
import { checkRecoveryAnswers, checkServiceInvariants, effectsOf } from '../service/check.js';
import { checkProgress, type RecoveryOutcome } from '../checkers/progress.js';
import { clockSkewMs, recoverOperation, recoveryTimeoutMs } from '../scenario/recovery.js';
import type { TrackerRequest } from '../tracker/messages.js';
import { builtinService, type BuiltinName as Variant } from '../tracker/builtin.js';
import { planWorkers } from '../scenario/workers.js';
import Database from 'better-sqlite3';
import type { Scenario } from '../scenario/schema.js';
import type { ServiceDefinition } from '../service/definition.js';
import { endpointOf, serviceFor } from '../service/run.js';
import { ServerProcess } from './child.js';
import { httpTransport, realClientEnv, sleepMs } from './http-transport.js';

/**
 * Runs a scenario for real: each service instance is a `retrysim serve`
 * child process (`--variant`, or `--service` for a scenario that names a
 * user's module) on one SQLite file, faults are armed through the admin
 * route, the kill fault is a real SIGKILL (at a wall-clock time from the
 * parent, or by the child itself when a request reaches the kill step or
 * its n-th handler returns, before the answer leaves),
 * followed by a restart on the same port and database after
 * `restartAfterMs`. Clients are the same harness and model layer as in the
 * simulation, over node:http with real timeouts, drawing jitter and keys
 * from the same seeded streams. The checkers then read the database file.
 *
 * What cannot carry over: network latency (loopback is ~0.1 ms, the model's
 * is whatever the scenario says) and the explicit schedule (real
 * interleaving is up to the OS).
 */

/** What a real run produced. */
export interface RealRun {
  reports: Record<string, number>;
  violations: Violation[];
  operations: OperationEnd[];
  /** SIGKILLs the servers received (and survived by restarting). */
  kills: number;
  wallMs: number;
  /**
   * Instances (`s0`, …) whose requests or deferred work (a hosted app's
   * timers after a 202) were still running when {@link SETTLE_LIMIT_MS} ran
   * out: their effects were read then, possibly before that work wrote them.
   */
  unsettled: string[];
  /**
   * The recovery phase (invariant 5), when the service declares `progress`:
   * per operation that had not succeeded, how its resubmission to the real
   * processes ended, once the faults were disarmed and `settleMs` of real
   * time had passed — the simulation's phase, on the wall clock.
   */
  recovery: Map<string, RecoveryOutcome>;
}

/**
 * How long a real run waits, once its clients are done, for each live
 * process's requests and deferred work (timers after a 202) to finish before
 * it reads the effects: the simulation runs to quiescence, a real process
 * has no end; past this limit the effects are read as they stand, and the
 * run says which instances were still at work.
 */
export const SETTLE_LIMIT_MS = 10_000;

/** Options of {@link runScenarioReal}. */
export interface RealRunOptions {
  /** Directory for the database file; default a fresh temp dir (removed afterwards). */
  dir?: string;
  /** The user service a scenario's `service.module` names (default: the one loaded from that path in this process). */
  service?: ServiceDefinition;
  /**
   * Run the recovery phase (and judge `progress`) when the service declares
   * `progress`: it waits out `settleMs` of real time, so only callers that
   * compare progress ask for it (service conformance). Default false.
   */
  recovery?: boolean;
}

/**
 * Keeps a server child up: when it dies by SIGKILL while the run is going,
 * starts it again (same port, same file) `restartAfterMs` after the death.
 */
export class Supervisor {
  private stopping = false;
  private loop: Promise<void> | undefined;
  /** Restarts done. */
  restarts = 0;
  /**
   * @param spares keep a warm standby ready for this many more kills (so a
   *   restart takes `restartAfterMs`, not node's ~1 s startup)
   */
  constructor(readonly server: ServerProcess, readonly restartAfterMs: number, private spares = 0) {}

  /** Starts watching; prepares the first standby when one is wanted. */
  async watch(): Promise<void> {
    if (this.spares > 0) await this.server.prepareStandby();
    this.loop = (async () => {
      for (;;) {
        const e = await this.server.exited();
        const diedAt = Date.now();
        if (this.stopping || e.signal !== 'SIGKILL') return;
        await this.server.start(diedAt + this.restartAfterMs);
        this.restarts++;
        if (--this.spares > 0 && !this.stopping) await this.server.prepareStandby();
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    // A restart may be under way: let it finish, then stop the process it started.
    await this.server.stop();
    await this.loop?.catch(() => undefined);
    await this.server.stop();
  }
}

/**
 * Runs one scenario against real server processes.
 *
 * @example
 * const real = await runScenarioReal(canonicalScenario('lost_response', row));
 * real.reports.op1 // reports held for the operation, from the SQLite file
 */
export async function runScenarioReal(s: Scenario, opts: RealRunOptions = {}): Promise<RealRun> {
  // Refused rather than ignored: a real run without the 429s would be compared as if it had them.
  if (s.network.throttle !== undefined) throw new Error(`scenario '${s.name}': network.throttle (429 with Retry-After) is simulated only; real mode has no rate limiter in front of the server`);
  const t0 = Date.now();
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'retrysim-real-'));
  const module = s.service.module;
  // A user's service: the definition judges the file; the processes load the same module by path.
  const def = module === undefined ? builtinService(s.service.variant!) : serviceFor(s, opts.service);
  const dbPath = join(dir, module === undefined ? 'tracker.db' : 'service.db');
  const kill = s.faults.kill;
  const servers = Array.from({ length: s.service.instances }, (_, i) => new ServerProcess({
    ...(module === undefined ? {
      variant: s.service.variant as Variant,
      leaseMs: s.service.leaseMs,
      clientTimeoutMs: s.client.timeoutMs,
      allowUnsafeLease: s.service.allowUnsafeLease,
      completedTtlMs: s.service.completedTtlMs,
    } : { module }),
    dbPath,
    name: `s${i}`,
    slowMs: s.faults.slowMs,
    clockOffsetMs: s.service.clockOffsetMs[i] ?? 0,
  }));
  // The simulation kills once per scenario: one warm spare for the instance that dies.
  const supervisors = servers.map((srv, i) => new Supervisor(srv, kill && kill.instance === i ? kill.restartAfterMs : 500, kill && kill.instance === i ? 1 : 0));
  const timers: NodeJS.Timeout[] = [];
  try {
    // Sequential starts: several processes creating the schema at once would contend for the file.
    for (const srv of servers) await srv.start();
    // The same per-instance arming as the simulation: instance 0 carries the counters.
    await servers[0]!.setFaults({
      loseResponseAfterCommit: s.faults.loseResponseAfterCommit,
      crashMidRequest: s.faults.crashMidRequest,
      dropResponses: s.network.loseResponses,
      ...(s.faults.pause ? { pause: s.faults.pause } : {}),
      ...(s.faults.crashAt !== undefined ? { crashAt: s.faults.crashAt } : {}),
      ...(s.faults.crashAtNth !== undefined ? { crashAtNth: s.faults.crashAtNth } : {}),
    });
    // Where the slow fault strikes is per instance, as in the simulation (hostInstances).
    if (s.faults.slowAtStep !== undefined) for (const srv of servers) await srv.setFaults({ slowAtStep: s.faults.slowAtStep, ...(s.faults.slowAtStepNth !== undefined ? { slowAtStepNth: s.faults.slowAtStepNth } : {}) });
    if (kill?.atStep !== undefined) await servers[kill.instance]!.setFaults({ killAtStep: kill.atStep, ...(kill.nth !== undefined ? { killAtStepNth: kill.nth } : {}) });
    if (kill?.atAnswer !== undefined) await servers[kill.instance]!.setFaults({ killAtAnswer: kill.atAnswer });
    for (const sup of supervisors) await sup.watch();
    if (kill?.atMs !== undefined) timers.push(setTimeout(() => void servers[kill.instance]!.kill(), kill.atMs));

    const ports = servers.map((srv) => srv.port);
    const transport = httpTransport(ports);
    const root = new Prng(s.seed);
    const plan = planWorkers(s, endpointOf(def));
    const ends = plan.ends;
    // Each operation's last request, for the recovery phase to resubmit verbatim (as the simulation does).
    const lastRequests = new Map<string, TrackerRequest>();
    const workers = plan.workers.map(async (w) => {
      // Same stream labels as the simulation (kernel.fork), so jitter and per-attempt keys match draw for draw.
      const env = realClientEnv(root.fork(w.rngLabel));
      const opId = ends[w.opIndex]!.id;
      const recording = { send: (req: TrackerRequest, timeoutMs: number) => (lastRequests.set(opId, req), transport.send(req, timeoutMs)) };
      if (w.startMs > 0) await sleepMs(w.startMs);
      await w.run(recording, env);
    });
    await Promise.all(workers);
    for (const t of timers) clearTimeout(t);
    // Let work the clients gave up on settle (a slow request still finishing) and
    // work deferred past an answer run (a 202 whose job a timer writes), as the
    // simulation runs to quiescence.
    const settled = await Promise.all(servers.map((srv) => (srv.alive ? settle(srv) : Promise.resolve(true))));
    const unsettled = servers.filter((_, i) => !settled[i]).map((_, i) => `s${i}`);
    const recovering = def.progress !== undefined && opts.recovery === true;
    // With a recovery phase, the main run is judged on the file as the main run left it, before the
    // resubmissions add to it — as the simulation judges it (service/run.ts: invariants 1–4 and the effects
    // held after the main run, progress after recovery). Read after recovery, a lease's take-over that paid
    // there counted as the main run's (real 1, simulation 0: a difference that was only the moment read).
    const main = recovering ? mainRunVerdict(def, dbPath, ends) : undefined;
    const recovery = !recovering ? new Map<string, RecoveryOutcome>() : await recoverReal(s, def.progress!, servers, ends, lastRequests, transport, root);
    for (const sup of supervisors) await sup.stop();
    // Read-write, as the servers did: a file left by a kill -9 may need its WAL recovered on open.
    const db = new Database(dbPath);
    try {
      const verdict = main ?? checkServiceInvariants(def, db, ends);
      // Invariant 5 as the simulation judges it (service/run.ts): the same checkers on the effects after recovery.
      const progress = def.progress;
      const extra = progress === undefined || !opts.recovery ? [] : [
        ...checkRecoveryAnswers(def, db, ends, recovery, endpointOf(def).resultId),
        ...checkProgress((op) => effectsOf(def, db, op), ends, recovery, {
          usesLease: progress.leased, leaseMs: progress.settleMs, clientTimeoutMs: recoveryTimeoutMs(s), slowMs: s.faults.slowMs, skewMs: clockSkewMs(s),
        }, def.effects.noun ?? 'effect'),
      ];
      return {
        reports: verdict.reports,
        violations: [...verdict.violations, ...extra],
        recovery,
        operations: ends,
        kills: servers.reduce((n, srv) => n + srv.kills, 0),
        wallMs: Date.now() - t0,
        unsettled,
      };
    } finally {
      db.close();
    }
  } finally {
    for (const t of timers) clearTimeout(t);
    for (const sup of supervisors) await sup.stop().catch(() => undefined);
    if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Waits (bounded) until a server has no request in flight and no deferred
 * work running; false: the limit ran out first. `idleBackground`: the
 * background count that still reads as idle — what a process that serves
 * run after run had before this run began (a timer an earlier run left for
 * good, a handler's uncleared interval, is not this run's work; without it
 * every later run would wait the whole limit).
 */
export async function settle(srv: ServerProcess, limitMs = SETTLE_LIMIT_MS, idleBackground = 0): Promise<boolean> {
  const { httpJson } = await import('./http-transport.js');
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    try {
      const r = await httpJson(srv.port, 'GET', '/_admin/counts');
      const c = r.json as { inflight: number; background?: number };
      // The counts request itself is in flight while it is answered.
      if (c.inflight <= 1 && (c.background ?? 0) <= idleBackground) return true;
    } catch {
      return true; // the process is gone
    }
    await sleepMs(20);
  }
  return false;
}

/**
 * Invariants 1–4 and the effects held on the file as the main run left it,
 * read while the servers run (a read-only connection beside theirs; WAL).
 */
function mainRunVerdict(def: ServiceDefinition, dbPath: string, ends: OperationEnd[]): ReturnType<typeof checkServiceInvariants> {
  const ro = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    return checkServiceInvariants(def, ro, ends);
  } finally {
    ro.close();
  }
}

/**
 * The recovery phase on real processes: the faults disarmed (lost answers,
 * crashes, pauses, kills; slow processing and clock offsets stay, as in the
 * simulation), then, `settleMs` + skew + 1 ms of real time after the main
 * run, each operation that did not succeed runs the simulation's recovery
 * client ({@link recoverOperation}) against the live processes, on the
 * wall clock, all operations at once.
 */
async function recoverReal(
  s: Scenario,
  progress: NonNullable<ServiceDefinition['progress']>,
  servers: readonly ServerProcess[],
  ends: readonly OperationEnd[],
  lastRequests: ReadonlyMap<string, TrackerRequest>,
  transport: ReturnType<typeof httpTransport>,
  root: Prng,
): Promise<Map<string, RecoveryOutcome>> {
  const outcomes = new Map<string, RecoveryOutcome>();
  const pending = ends.filter((e) => !e.results.some((x) => x.kind === 'success'));
  if (pending.length === 0) return outcomes;
  for (const srv of servers) {
    if (srv.alive) await srv.setFaults({ loseResponseAfterCommit: 0, crashMidRequest: 0, dropResponses: 0, pause: null, killAtStep: null, killAtAnswer: 0 });
  }
  const settle = progress.settleMs + clockSkewMs(s) + 1;
  const timeoutMs = recoveryTimeoutMs(s, progress.leased);
  const budgetMs = 2 * (progress.settleMs + timeoutMs + s.faults.slowMs) + 1000;
  await sleepMs(settle);
  const t0 = Date.now();
  await Promise.all(pending.map(async (end) => {
    const req = lastRequests.get(end.id);
    if (req === undefined) return;
    // Times relative to the phase's start: the outcome's fromMs is "settle after the main run", as the simulation's is after its end.
    outcomes.set(end.id, await recoverOperation({
      scenario: s, progress, end, req, startMs: settle, timeoutMs, budgetMs,
      send: (x, t) => transport.send(x, t), sleep: sleepMs, now: () => Date.now() - t0, rng: root.fork(`recover.${end.id}`),
    }));
  }));
  return outcomes;
}
