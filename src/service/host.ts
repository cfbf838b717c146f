import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { Deferred, StepEnv } from '../tracker/env.js';
import type { Footprint } from '../sim/footprint.js';
import { CrashFault, fire, resolveFaults, type FaultOptions } from '../tracker/faults.js';
import type { TrackerRequest, TrackerResponse } from '../tracker/messages.js';
import type { EffectStore, HostedInstance } from '../net/sim-network.js';
import type { ServiceDatabase } from './db.js';
import type { BackgroundSim, CrashKind, ServiceDefinition, ServiceRequest, ServiceResponse, ServiceSim } from './definition.js';
import { answerLine, describeThrow, isAppName, ofTheRun, ServiceError, serviceWord } from './errors.js';
import { ordinal, overlapKey, REACH, REACH_MAX, type Reached } from './reached.js';
import { isHostedApp } from '../app/define.js';
import { ClockSpinError, installKernelClock, type ClockScope, type KernelClock } from '../sim/fake-timers.js';
import type { Kernel, Task } from '../sim/kernel.js';
import type { Prng } from '../random/prng.js';
import { probeRejection } from '../sim/rejections.js';
import { isOwnService } from './own.js';
import { simulatedIdentity, type ProcessIdentity } from '../sim/process-identity.js';
import { ProcessScope } from './process-scope.js';
import { abandon, isThenable } from '../sim/thenable.js';

/** Fault knobs of one hosted instance: the tracker's, plus where the crash and slow faults strike. */
export interface HostFaults extends FaultOptions {
  /** The crash point the crash counter fires at; undefined: the first declared crash point a request reaches. */
  crashAt?: string;
  /** With `crashAt`: the crash fires the n-th time one request reaches it (1-based); undefined: the first. */
  crashAtNth?: number;
  /** The step after which a request sleeps `slowMs`; default the definition's first step. */
  slowAtStep?: string;
  /** The slow fault strikes a request's n-th reach of its step (1-based); undefined: the first. */
  slowAtStepNth?: number;
}

/**
 * The request now running on any hosted instance. Only one request runs at a
 * time (the kernel runs one task at a time), so whoever waits on a deferred
 * is the request that was running when `wait()` was called.
 */
let running: HostSim | undefined;

/**
 * One process of a user's service on the simulated network: the same
 * hosting the tracker gets (per-request env, kill/restart, fault counters),
 * through the public {@link ServiceDefinition} only.
 */
export class ServiceHost implements HostedInstance {
  readonly faults: HostFaults;
  readonly effectNoun: string;
  readonly effectStore: EffectStore;
  memory: unknown;
  restarts = 0;
  /**
   * The run's kernel clock, in simulation: the handler's Date, timers and
   * randomness are virtual (see {@link onKernelClock}). Undefined in real
   * mode (`retrysim serve`): they are the machine's.
   */
  clock: KernelClock | undefined;
  /** The instance's seeded stream behind Math.random and crypto in its handlers (forked from the run's seed). */
  rng: Prng | undefined;
  private readonly total: (() => number) | undefined;
  /** Keys of the requests inside this instance's handler now (a kill ends them without a word: see restart). */
  private readonly inside: string[] = [];
  /** Requests of this process inside its handler now: one awaiting a promise of another's waits while any other is at work. */
  active = 0;
  /** Whether this process's requests look for unhandled rejections at their steps and answer (in simulation). */
  readonly probes: boolean;
  /**
   * Background work of this process still running in real mode (a hosted
   * app's timers after a 202): `serve`'s `/_admin/counts` reports it, so a
   * real run reads the effects once the deferred work is done, as the
   * simulation does.
   */
  backgroundLive = 0;
  /**
   * Kernel time until which this process is stalled by the pause fault (a
   * GC pause): its timers wait for it (see {@link ClockScope.frozenUntil}).
   * A kill ends the stall with the process.
   */
  pausedUntil = Number.NEGATIVE_INFINITY;
  /**
   * Who this process is in a simulation (hostname, pid: see
   * src/sim/process-identity.ts): its code reads it as `os.hostname()` and
   * `process.pid`, a new pid at each restart. Undefined in real mode, where
   * they are the machine's.
   */
  identity: ProcessIdentity | undefined;

  constructor(
    readonly def: ServiceDefinition,
    readonly sdb: ServiceDatabase,
    readonly name: string,
    faults: Partial<HostFaults> = {},
    /** Where a campaign counts the situations this run reaches (coverage); undefined: not counted. */
    readonly reached?: Reached,
    /** A simulated process (true): its code reads the instance's own hostname and pid; false: the machine's (real mode). */
    simulated = false,
  ) {
    this.identity = simulated ? simulatedIdentity(name, 0) : undefined;
    this.faults = { ...resolveFaults(faults), crashAt: faults.crashAt, crashAtNth: faults.crashAtNth, slowAtStep: faults.slowAtStep, slowAtStepNth: faults.slowAtStepNth };
    for (const [what, v, list] of [['pause.atStep', faults.pause?.atStep, def.steps], ['slowAtStep', faults.slowAtStep, def.steps], ['crashAt', faults.crashAt, def.crashPoints ?? []]] as const) {
      if (v !== undefined && !list.includes(v)) throw new ServiceError(def.name, `fault ${what} '${v}' is not declared (declared: ${list.join(', ') || 'none'}); the fault would never fire`);
    }
    this.effectNoun = def.effects.noun ?? 'effect';
    // A hosted app keeps its effects in the simulated key-value store, not in a database.
    this.effectStore = isHostedApp(def) ? 'store' : 'db';
    // A hosted app's requests look for unhandled rejections at every turn of their own (src/app/serve-request.ts);
    // retrysim's own services leave none (src/service/own.ts).
    this.probes = !isAppName(def.name) && !isOwnService(def);
    // A simulated process starts when the run's kernel clock arrives (useClock): its memory() runs on it.
    this.memoryDue = simulated;
    if (!simulated) this.memory = this.freshMemory();
    const t = def.effects.total;
    this.total = t === undefined ? undefined : () => t(sdb.db);
  }

  /** The step after which the slow fault's time passes (a getter: real mode's admin route may re-arm `faults.slowAtStep`). */
  get slowStep(): string {
    return this.faults.slowAtStep ?? this.def.slowStep ?? this.def.steps[0]!;
  }

  /** A simulated process whose memory() has not run yet: it runs once, when the run's clock arrives ({@link useClock}). */
  private memoryDue = false;

  private freshMemory(): unknown {
    if (this.def.memory === undefined) return {};
    const m = this.memoryOnce();
    // `memory: async () => …` handed every handler a Promise as sim.memory, and the service's first
    // property read failed inside the handler ("Cannot read properties of undefined"), far from the cause.
    if (isThenable(m)) {
      abandon(m);
      throw new ServiceError(this.def.name, 'memory() returned a Promise (an async function): it runs synchronously as each simulated process starts, and what it returns is sim.memory — build the state synchronously (a Map, a cache object); a client that must connect first connects in the handler, or once at the module\'s top level with a top-level await');
    }
    return m;
  }

  private memoryOnce(): unknown {
    const clock = this.clock;
    try {
      // Real mode (serve): the machine's process, clock and timers.
      if (clock === undefined) return this.def.memory!();
      // The process's start-up, on the kernel's clock as the process (see ProcessScope): a lock owner computed here is this process's, and its Date, randomness and timers are the run's.
      clock.enter(new ProcessScope(this, clock.kernel));
      try {
        const def = this.def as Required<Pick<ServiceDefinition, 'memory'>>; // checked in freshMemory
        return clock.startProcess(() => def.memory());
      } finally {
        clock.leave();
      }
    } catch (e) {
      throw new ServiceError(this.def.name, `memory() threw ${describeThrow(e)}`);
    }
  }

  effectCount(): number | undefined {
    return this.total?.();
  }

  /** A kill: the dead process's timers (a handler's setInterval, a setTimeout eviction) never fire, as in a real `kill -9`. */
  killed(): void {
    this.clock?.dropTimers((owner) => (owner instanceof HostSim || owner instanceof ProcessScope) && owner.ownedBy(this));
    this.pausedUntil = Number.NEGATIVE_INFINITY;
    // Its background work (a hosted app's timers) dies with it.
    const k = this.clock?.kernel;
    for (const t of this.backgroundTasks.splice(0)) if (k !== undefined && t.state !== 'done' && t.state !== 'dead') k.kill(t);
    this.generation++;
  }

  /**
   * Crashes this process on the simulated network (set by it: see
   * {@link onCrash}); undefined in real mode, where Node itself ends the
   * process.
   */
  private crashHook: ((text: string) => void) | undefined;

  /** @internal The network this process runs on: how it dies of an error nothing handled (an unhandled rejection). */
  onCrash(crash: (text: string) => void): void {
    this.crashHook = crash;
  }

  /**
   * @internal What Node does with a promise rejection the code left unhandled
   * (`--unhandled-rejections=throw`, its default) or an exception thrown
   * where nothing catches it (a timer callback): the process dies — every
   * request in it unanswered, its memory lost — and restarts as after a kill.
   * False when there is no simulated network to crash on (the caller reports it).
   */
  crash(reason: unknown, kind: CrashKind = 'unhandled rejection'): boolean {
    const hook = this.crashHook;
    if (hook === undefined) return false;
    // retrysim's own refusal of the module (a step inside an open transaction, an undeclared step) that the
    // service's code left unhandled — thrown inside an async function handed to db.transaction(), say — is
    // the campaign's one line, exit 2, as when it reaches the request itself; as a crash it was "no request
    // answered 2xx" on every run, its reason in a coverage row.
    const k = this.clock?.kernel;
    if (reason instanceof ServiceError && k !== undefined) {
      k.schedule(0, () => {
        throw reason;
      });
      return true;
    }
    const text = `${kind}: ${describeThrow(reason)}`;
    this.reached?.add('process-crash');
    // The dead process's connection closes: SQLite rolls back what it left open.
    if (this.sdb.db.inTransaction) this.sdb.db.exec('ROLLBACK');
    hook(text);
    return true;
  }

  /** Tasks of this process's own background work (see {@link ServiceSim.background}). */
  private readonly backgroundTasks: Task<unknown>[] = [];
  /** Bumped by each kill: background work started before it belongs to a dead process. */
  private generation = 0;

  /** @internal Starts background work of this process (simulation only). */
  spawnBackground(name: string, body: (bg: BackgroundSim) => Promise<void>): void {
    const k = this.clock?.kernel;
    if (k === undefined) return;
    const taskName = `${this.name}/${name}`;
    const gen = this.generation;
    const bg: BackgroundSim = {
      now: () => k.now + this.faults.clockOffsetMs + this.epochMs,
      sharedNow: () => k.now + this.epochMs,
      step: async (label, footprint) => {
        await k.yield(label, footprint);
        k.log(taskName, label);
      },
      detail: (label, call, answer) => k.detail(taskName, label, call, answer),
      sleep: (ms) => k.sleep(ms),
      othersLive: () => k.liveTaskNames().length > 1,
      frozenUntil: () => this.pausedUntil,
      alive: () => this.generation === gen,
      crash: async (reason, kind) => {
        if (!this.crash(reason, kind)) return;
        // The crash lands before this task runs on (due now); the kill ends it with the process.
        await k.sleep(0);
      },
    };
    this.backgroundTasks.push(k.spawn(taskName, () => body(bg)));
  }

  restart(): void {
    this.restarts++;
    // A new process: a new pid (before memory(), which starts it).
    if (this.identity !== undefined) this.identity = simulatedIdentity(this.name, this.restarts, this.clock?.kernel.now ?? 0);
    this.memory = this.freshMemory();
    // The requests a kill ended never left their handler: they are not inside any more.
    for (const k of this.inside.splice(0)) this.reached?.leave(k);
    // Nor are they at work: none of them can settle what a request of the new process awaits.
    this.active = 0;
  }

  async handle(req: TrackerRequest, env: StepEnv): Promise<TrackerResponse> {
    const sim = new HostSim(this, env, req);
    const what = `${req.method} ${req.path}`;
    const reached = this.reached;
    let key: string | undefined;
    if (reached !== undefined) {
      if (this.name !== 's0') reached.add('instance:second');
      key = overlapKey(req.headers);
      if (key !== undefined) {
        reached.enter(key);
        this.inside.push(key);
      }
    }
    let res: ServiceResponse;
    this.active++;
    try {
      sim.resume();
      res = await this.def.handle(req as ServiceRequest, sim);
      // A step or sleep still waiting once the handler returned is not the handler's: work it left running reached it (a listener's queueMicrotask).
      if (sim.steppedWhileReturning()) throw sim.lateWait(sim.pendingWait!, this.clock!);
      // A handler that awaited another request's promise may end inside that request's turn: back on its own task first.
      if (sim.parkedOnOthers) await sim.rejoin();
      sim.suspend();
      // Before the answer leaves: a rejection the handler left unhandled ends the process first.
      if (this.probes) await sim.probeCrash();
      if (key !== undefined) this.left(key);
    } catch (e) {
      if (sim.parkedOnOthers) await sim.rejoin();
      sim.suspend();
      if (this.probes) await sim.probeCrash();
      if (key !== undefined) this.left(key);
      if (this.sdb.db.inTransaction) this.sdb.db.exec('ROLLBACK'); // as a real process's driver would on an uncaught throw
      if (this.clock !== undefined) threwIn(this.clock.kernel).push({ name: sim.name, how: e instanceof CrashFault ? e.message : `threw ${describeThrow(e)}` });
      if (e instanceof CrashFault) return { status: 500, headers: { 'content-type': 'application/json', 'x-instance': this.name }, body: JSON.stringify({ error: `internal error: ${e.message}` }) };
      if (e instanceof ServiceError) throw e;
      const spin = e instanceof ClockSpinError ? e : this.clock?.stopped;
      if (spin !== undefined) throw this.stoppedError(spin, what, sim);
      const thrown = describeThrow(e);
      if (this.clock === undefined) {
        // Real mode: the server answers `answer` (the same 500 as in
        // simulation, no file names, no source) and names the throw on stderr.
        const err = new ServiceError(this.def.name, `handle threw ${thrown} while serving ${what}${sim.lastStep ? ` after step '${sim.lastStep}'` : ''}`);
        err.answer = internalError(e, this.name);
        throw err;
      }
      // What a real framework does with an uncaught exception in one request:
      // answer 500 and serve on. The effects are judged as they stand, and
      // the exception is one line of the trace, where the user's code threw.
      this.clock.kernel.log(sim.name, `threw ${thrown}`);
      if (reached !== undefined) reached.threw ??= thrown;
      return internalError(e, this.name);
    } finally {
      this.active--;
      sim.answered = true;
    }
    const stopped = this.clock?.stopped;
    if (stopped !== undefined) throw this.stoppedError(stopped, what, sim);
    this.sdb.checkSchema(what, this.def);
    if (this.sdb.db.inTransaction) throw new ServiceError(this.def.name, `handle returned from ${what} with a transaction still open; commit or roll back before answering`);
    const out = checkResponse(this.def.name, what, res);
    out.headers['x-instance'] = this.name;
    // What a campaign that never succeeded quotes: one line of 200 characters at most.
    if (reached !== undefined && (out.status < 200 || out.status > 299)) reached.refused ??= answerLine(out.status, out.body, 199);
    // Only a fresh answer that committed something can be "lost after commit"
    // (a replay committed nothing, even if it wrote and rolled back first).
    if (out.status >= 200 && out.status < 300 && !out.replay && sim.wrote > 0 && fire(this.faults, 'loseResponseAfterCommit')) {
      out.dropConnection = true;
      reached?.add('lose-after-commit');
    }
    if (out.replay) reached?.add('replay');
    else if (key !== undefined && out.status >= 200 && out.status < 300) reached?.answered(key, out.status, out.body);
    return out;
  }

  /** A request carrying `key` left the handler. */
  private left(key: string): void {
    const i = this.inside.indexOf(key);
    if (i >= 0) this.inside.splice(i, 1);
    this.reached?.leave(key);
  }
  /** Use the run's kernel clock (simulation); `rng` feeds the handlers' Math.random and crypto. */
  useClock(clock: KernelClock | undefined, rng: Prng | undefined): void {
    this.clock = clock;
    this.rng = rng;
    // The process starts now, once: a later phase (recovery) goes on with the same process and memory.
    if (this.memoryDue && clock !== undefined) {
      this.memoryDue = false;
      this.memory = this.freshMemory();
    }
  }

  /**
   * The wall-clock instant of virtual time 0 that `sim.now()` adds, as
   * `Date.now()` does (the run's clock's epoch): 0 in real mode, where the
   * environment's time already is the machine's.
   */
  get epochMs(): number {
    return this.clock?.epochMs ?? 0;
  }

  /** A spin on the clock (or a timer callback that threw): the service cannot run on virtual time; one line naming the request and step. */
  private stoppedError(e: Error, what: string, sim: HostSim): ServiceError {
    return new ServiceError(this.def.name, `request ${sim.name} (${what}${sim.lastStep ? `, after step '${sim.lastStep}'` : ', before its first step'}) ${e.message}`);
  }
}

/**
 * Puts service instances on `kernel`'s clock for one run: installs the
 * dispatching globals ({@link installKernelClock}) and gives each
 * {@link ServiceHost} a stream forked from the run's seed
 * (`service/<instance>/random`), so a replay reads the same values.
 * `epochMs`: the wall-clock instant of virtual time 0 (the scenario's
 * `service.epochMs`), for `Date`, `sim.now()` and SQLite's clock alike. The
 * caller runs the kernel through `clock.watch(...)` and calls
 * `clock.release()` in a `finally`.
 */
export function onKernelClock(kernel: Kernel, instances: readonly unknown[], epochMs = 0): KernelClock {
  const clock = installKernelClock(kernel, epochMs);
  // Retrysim's own services leave no rejection unhandled (src/service/own.ts): their runs skip the collection and its two host turns per run.
  if (!instances.every((h) => h instanceof ServiceHost && isOwnService(h.def))) clock.collectRejections();
  try {
    for (const h of instances) if (h instanceof ServiceHost) h.useClock(clock, kernel.fork(`service/${h.name}/random`));
  } catch (e) {
    // A memory() that threw: the caller's `finally` is not reached yet, and the globals must not stay installed.
    clock.release();
    throw e;
  }
  return clock;
}

/**
 * A run stopped because a request awaited something outside the simulation:
 * name it. The thread-pool calls it lists are the ones a simulated handler
 * still cannot make; the deterministic ones (zlib's one-shot functions,
 * scrypt/pbkdf2/hkdf, crypto.subtle's digest, AES, key derivation, and
 * signatures but for signing with ECDSA or RSA-PSS) are answered at once
 * (src/sim/sync-thread-pool.ts, src/sim/sync-subtle.ts).
 */
export function stuckRequest(service: string, scope: ClockScope | undefined, kernel: Kernel): ServiceError {
  let who = scope?.name;
  if (who === undefined) {
    try {
      who = kernel.currentTask().name;
    } catch {
      // no task running: keep the generic wording
    }
  }
  return ofTheRun(new ServiceError(service, `never answered ${who === undefined ? 'a request' : `request ${who}`}: ${leftUnsettled(who, kernel)}the handler awaited something outside the simulation (real I/O, such as a file read or a dynamic import() — import the module at the top of the file instead; a thread-pool call that needs real randomness, such as crypto.generateKeyPair, crypto.subtle.generateKey, signing with ECDSA or RSA-PSS, or RSA-OAEP; a zlib stream such as createGzip(); a promise nobody resolves; a timer of another process, or an interval another request or memory() armed); use sim.sleep, sim.step and sim.defer, or timers of its own${sharedWith(who, kernel)}`));
}

/** Requests of a run whose handler ended by a throw (a crash point's fault included), by the run's kernel. */
const threwByKernel = new WeakMap<Kernel, Array<{ name: string; how: string }>>();
function threwIn(kernel: Kernel): Array<{ name: string; how: string }> {
  let l = threwByKernel.get(kernel);
  if (l === undefined) threwByKernel.set(kernel, (l = []));
  return l;
}

/**
 * The likeliest cause when another request of the same process ended by a
 * throw: an in-process single flight whose leader threw (a crash point)
 * before settling the promise its duplicates await. Until 2026-12 only the
 * generic list was said, real I/O first.
 */
export function leftUnsettled(who: string | readonly string[] | undefined, kernel: Kernel): string {
  const stuck = who === undefined ? [] : typeof who === 'string' ? [who] : who;
  const instance = stuck.length === 0 ? undefined : /^(s\d+)\//.exec(stuck[0]!)?.[1];
  if (instance === undefined) return '';
  const threw = threwIn(kernel).filter((x) => x.name.startsWith(`${instance}/`) && !stuck.includes(x.name));
  if (threw.length === 0) return '';
  const t = threw[0]!;
  return `most likely ${stuck.length === 1 ? 'it awaits' : 'they await'} a promise that ${t.name}, a request of its process, left unsettled when its handler ended by a throw (${t.how}) — an in-process single flight whose first request fails must settle what the others await (reject or resolve it in a finally); else `;
}

/**
 * The likeliest cause when a request of another instance is at work, or a
 * request was killed with its process: a lock or queue made at module level
 * (`const one = pLimit(1)`). One Node process hosts every simulated
 * instance, so such an object is one for all of them and outlives their
 * kills, where each real process has its own and a kill frees it; a request
 * then waits on another instance's, or on a dead one's, for ever. Until
 * 2026-12 only the generic list above was said, naming real I/O.
 */
function sharedWith(who: string | undefined, kernel: Kernel): string {
  const instance = who === undefined ? undefined : /^(s\d+)\//.exec(who)?.[1];
  if (instance === undefined) return '';
  const request = /^s\d+\/[^ ]*#\d+$/;
  const other = kernel.liveTaskNames().find((n) => request.test(n) && !n.startsWith(`${instance}/`));
  const killed = other === undefined ? kernel.killedTaskNames().find((n) => request.test(n)) : undefined;
  if (other === undefined && killed === undefined) return '';
  const whose = other !== undefined ? `${other}, a request of another instance, settles` : `${killed!}, a request killed with its process, would have settled`;
  return ` — or a promise only ${whose}: a lock, queue or limiter made at module level (\`pLimit(1)\`, a Mutex) is one object for every simulated instance and outlives their kills, where each process has its own; make it in memory()`;
}

/** The 500 a request whose handler threw answers, in simulation and for real: the exception's name and first line of message, nothing of where or of the source. */
function internalError(e: unknown, instance: string): TrackerResponse {
  const headline = e instanceof Error ? `${e.name}: ${e.message.split('\n')[0]!.slice(0, 160)}` : 'a non-Error value';
  return { status: 500, headers: { 'content-type': 'application/json', 'x-instance': instance }, body: JSON.stringify({ error: `internal error: ${headline}` }) };
}

/** What a body that is not a string is, and the usual way to make it one (bytes and objects are the likely slips). */
function bodyTypeProblem(body: unknown): string {
  if (body instanceof Uint8Array) return `a body of bytes (a ${body.constructor.name}; it must be a string: decode it, e.g. new TextDecoder().decode(body))`;
  if (body === null) return 'a body of null (it must be a string: \'\' for none)';
  if (typeof body === 'object') return `a body of type object (it must be a string: JSON.stringify it)`;
  return `a body of type ${typeof body} (it must be a string)`;
}

function checkResponse(service: string, what: string, res: unknown): TrackerResponse {
  const r = res as Partial<ServiceResponse> | undefined;
  if (typeof r !== 'object' || r === null) throw badResponse(service, what, String(res));
  if (!Number.isInteger(r.status) || r.status! < 100 || r.status! > 599) throw badResponse(service, what, `status ${JSON.stringify(r.status)}`);
  if (typeof r.body !== 'string') throw badResponse(service, what, bodyTypeProblem(r.body));
  const headers: Record<string, string> = {};
  const given = r.headers;
  if (given !== undefined) {
    for (const k in given) {
      if (!Object.hasOwn(given, k)) continue;
      const v = given[k];
      if (v === undefined) continue;
      // Node's setHeader takes a number (`'retry-after': 3` is common); the answer's headers here are strings, and the line says how.
      if (typeof v !== 'string') throw badResponse(service, what, `header '${k}' of type ${typeof v} (header values are strings${typeof v === 'number' || typeof v === 'boolean' ? `: '${k}': '${String(v)}'` : ''})`);
      checkHeader(service, what, k, v);
      headers[k.toLowerCase()] = v;
    }
  }
  const out: TrackerResponse = { status: r.status!, headers, body: r.body };
  if (headers['idempotent-replay'] === 'true') out.replay = true;
  return out;
}

function badResponse(service: string, what: string, why: string): ServiceError {
  return new ServiceError(service, `handle answered ${what} with ${why}; return { status, headers?, body }`);
}

/**
 * Header pairs already known to be sendable. A service answers with the same
 * few headers again and again, and node:http's validators (two regular
 * expressions) ran on every header of every answer; bounded: a cache, not a store.
 */
const sendable = new Set<string>();
const SENDABLE_MAX = 1024;

/** What node:http would refuse to send: real mode would drop the connection after the commit, so the simulation refuses it too. */
function checkHeader(service: string, what: string, k: string, v: string): void {
  const pair = `${k}\n${v}`;
  if (sendable.has(pair)) return;
  try {
    validateHeaderName(k);
    validateHeaderValue(k, v);
  } catch (e) {
    throw badResponse(service, what, `header ${JSON.stringify(k)}: ${JSON.stringify(v)} that HTTP cannot carry (${(e as Error).message})`);
  }
  if (sendable.size >= SENDABLE_MAX) sendable.clear();
  sendable.add(pair);
}

/** The {@link ServiceSim} of one request. */
class HostSim implements ServiceSim<unknown>, ClockScope {
  /** The request's task name (`s0/op1.w0#1`), for the trace and messages. */
  readonly name: string;
  /** Rows this request wrote (SQLite's change counter, counted while it ran; only while the lost-answer fault is armed). */
  wrote = 0;
  lastStep: string | undefined;
  private mark = 0;
  /** Whether to count writes: only the lost-answer-after-commit fault asks, and counters only count down. */
  private readonly track: boolean;
  /** This request stalled in a `thenCrash` pause: it crashes at the next crash point. */
  private crashAfterPause = false;
  /** How often this request reached the armed pause's step, and the armed crash point (for their `nth`). */
  private pauseReaches = 0;
  private crashReaches = 0;
  /** How often this request reached the slow fault's step while it was armed (for `slowAtStepNth`). */
  private slowReaches = 0;
  /** How often this request reached each step and crash point (counted only when the run's coverage is: see {@link countReach}). */
  private readonly reaches = new Map<string, number>();
  /** The slow fault already delayed this request: processing is slow once per request (SPEC §4), however often its code reaches the step. */
  private slowed = false;
  /** The current phase's footprint, for the sleeps inside it. */
  private phase: Footprint | undefined;
  /** What of this request waits in the kernel now (`sim.step('charge')`, `sim.sleep(5)`): one task waits on one thing at a time. */
  pendingWait: string | undefined;
  /** The kernel's count of events and steps when {@link pendingWait} began: unchanged, it began in the turn that is running now. */
  private pendingAt = -1;
  /** @internal The handler has returned or thrown: the request's task is answering or gone, so nothing of its code may step or sleep any more. */
  answered = false;

  constructor(
    private readonly host: ServiceHost,
    private readonly env: StepEnv,
    private readonly req: TrackerRequest,
  ) {
    this.track = host.faults.loseResponseAfterCommit > 0;
    this.name = host.clock === undefined ? `${req.method} ${req.path}` : host.clock.kernel.currentTask().name;
  }

  /** @internal Whether this request runs in `h` (its timers die with `h`'s process). */
  ownedBy(h: ServiceHost): boolean {
    return this.host === h;
  }

  get offsetMs(): number {
    return this.host.faults.clockOffsetMs;
  }

  /** For the watchdog's line: the service, the request and where it is. */
  where(): string {
    return `${serviceWord(this.host.def.name)}, ${this.req.method} ${this.req.path}, ${this.lastStep === undefined ? 'before its first step' : `after step '${this.lastStep}'`}`;
  }

  get rng(): Prng {
    return this.host.rng!;
  }

  /** The process this request runs in: what its code reads as `os.hostname()` and `process.pid` (undefined in real mode: the machine's). */
  get identity(): ProcessIdentity | undefined {
    return this.host.identity;
  }

  /**
   * The clock parks an idle handler until its own next timer: as sim.sleep,
   * but the code may run on before that timer — the promise it awaits
   * settled in another request's turn (a lock with a deadline on the wait,
   * async-mutex's `withTimeout`; a p-queue whose interval timer it armed;
   * a `Promise.race` of a single flight and a timeout). Its next step,
   * sleep or answer then wakes this task and comes back to it
   * ({@link rejoin}), as after {@link parkOnOthers}. Until 2026-12 only a
   * request with no timer of its own did: such a request's steps ran on the
   * other request's task, and the run ended "never answered request …"
   * (exit 2), with "kernel: sleep/yield/wait called outside a running
   * task", or ran to the simulation's one-hour limit.
   */
  park(ms: number): Promise<void> {
    // Rejected, not thrown: the clock calls this from a host turn of its own and stops the run on the rejection.
    if (this.host.clock !== undefined && this.db.inTransaction) return Promise.reject(this.waitInTransaction(`awaited a timer of its own (${ms} ms)`));
    // Shown, not hashed: without it a race through a setImmediate or a sleep between a check and its
    // write read as two requests answering out of nowhere (the timeline had only their steps).
    this.env.note?.(ms === 0 ? 'awaits a timer of its own due now (an immediate, a 0 ms timeout): another task may run first' : `awaits a timer of its own, due in ${ms} ms`);
    const sleepOrWake = this.env.sleepOrWake;
    if (sleepOrWake === undefined || this.awaitingOthers !== undefined) return this.wait(ms);
    return this.parkUntil(ms, (wake) => sleepOrWake.call(this.env, ms, wake, this.phase));
  }

  /** {@link wait}, on a wait that {@link rejoin} can end early. */
  private async parkUntil(ms: number, sleep: (wake: Deferred<void>) => Promise<void>): Promise<void> {
    const what = `a wait of ${ms} ms`;
    this.refuseLateWait(what);
    this.markPending(what);
    this.suspend();
    const d = this.env.defer<void>();
    const parked = { d, resumed: sleep(d) };
    this.awaitingOthers = parked;
    await parked.resumed;
    this.pendingWait = undefined;
    // Woken by a rejoin (its code ran on elsewhere): the rejoin resumes it, after this.
    if (this.awaitingOthers !== parked) return;
    this.awaitingOthers = undefined;
    this.resume();
  }

  /**
   * A request that waits with a transaction open (a hand-rolled BEGIN, then
   * an await) lets every other request on the connection run its SQL inside
   * it; in the simulation every instance shares that connection, where for
   * real each would find the file locked. Neither can be judged: one line
   * naming the request that holds it (the next request to reach a step used
   * to be blamed for a transaction it never opened).
   */
  private refuseWaitInTransaction(what: string): void {
    if (this.host.clock !== undefined && this.db.inTransaction) throw this.waitInTransaction(what);
  }

  private waitInTransaction(what: string): ServiceError {
    return new ServiceError(this.host.def.name, `request ${this.name} (${this.req.method} ${this.req.path}${this.lastStep === undefined ? ', before its first step' : `, after step '${this.lastStep}'`}) ${what} inside an open transaction; other requests on the connection would run their SQL inside it: commit or roll back before waiting`);
  }

  /** Set while this request's task is parked because its code awaits what another request of its process may settle. */
  private awaitingOthers: { d: Deferred<void>; resumed: Promise<void> } | undefined;

  /**
   * The handler awaits neither the kernel nor a timer of its own (a plain
   * promise: an in-process single flight whose first request has it). While
   * another request of this process is inside the handler, that one may
   * settle it, as in Node: park this task on a deferred of the scheduler's.
   * The awaited code then runs on as soon as the promise settles (inside the
   * other request's turn, as microtasks do); its next step, sleep or answer
   * first comes back to this request's own task ({@link rejoin}). Nobody at
   * work: false, and the wait is stuck (a promise nobody resolves).
   */
  /** Until when this request's process is stalled by a pause (its timers wait). */
  frozenUntil(): number | undefined {
    return this.host.pausedUntil;
  }

  /** Its handler has not answered: code its timers resolve is the handler's, running on in its task's turns (see {@link ClockScope.busy}). */
  busy(): boolean {
    return !this.answered;
  }

  /** A timer callback of this request threw (an uncaught exception): its process crashes, as after an unhandled rejection ({@link ServiceHost.crash}). */
  uncaught(error: unknown, kind: CrashKind = 'uncaught exception'): boolean {
    return this.host.clock !== undefined && this.host.crash(error, kind);
  }

  parkOnOthers(): boolean {
    const clock = this.host.clock;
    if (this.awaitingOthers !== undefined || clock === undefined) return false;
    // Or a timer of its process is pending (one another request or memory() armed: a limiter's
    // next start, as Bottleneck's): its callback may settle what this awaits, as in Node's one event
    // loop. Until 2026-12 only a request still at work counted, and a request queued behind one that
    // had answered was "never answered … awaited something outside the simulation" (exit 2).
    const others = this.host.active > 1;
    if (!others && !clock.hasPendingOneShot((o) => (o instanceof HostSim || o instanceof ProcessScope) && o.ownedBy(this.host))) return false;
    const d = this.env.defer<void>();
    this.suspend();
    this.awaitingOthers = { d, resumed: d.wait() };
    this.env.note?.(others ? 'awaits another request of its process' : 'awaits a timer of its process');
    return true;
  }

  /** @internal Whether this request's task is parked by {@link parkOnOthers} (then {@link rejoin} before its next kernel step). */
  get parkedOnOthers(): boolean {
    return this.awaitingOthers !== undefined;
  }

  /** @internal Back on this request's own task after {@link parkOnOthers}, before anything that takes a kernel step. */
  async rejoin(): Promise<void> {
    const w = this.awaitingOthers;
    if (w === undefined) return;
    this.awaitingOthers = undefined;
    w.d.resolve();
    await w.resumed;
    this.resume();
  }

  get db() {
    return this.host.sdb.db;
  }

  get memory() {
    return this.host.memory;
  }

  get instance() {
    return this.host.name;
  }

  /** @internal This request runs again: changes from now on are its own. */
  resume(): void {
    running = this;
    this.host.clock?.enter(this);
    if (this.track) this.mark = this.host.sdb.changes();
  }

  /** @internal This request is about to wait: count what it wrote since it resumed. */
  suspend(): void {
    if (this.track) this.wrote += this.host.sdb.changes() - this.mark;
    if (running === this) running = undefined;
    // Not at once: the handler's code after the call that reached this wait runs on in this turn (KernelClock.leaveAfterTurn).
    this.host.clock?.leaveAfterTurn();
  }

  now(): number {
    return this.env.now() + this.host.faults.clockOffsetMs + this.host.epochMs;
  }

  /** @internal The time without this instance's skew: the clock of a server every instance shares (the simulated store's). */
  sharedNow(): number {
    return this.env.now() + this.host.epochMs;
  }

  /** @internal A trace line on this request (shown, not hashed). */
  note(text: string): void {
    this.env.note?.(text);
  }

  /** @internal See {@link ServiceSim.detail}. */
  detail(step: string, call: string, answer: string): void {
    this.env.detail?.(step, call, answer);
  }

  /** @internal See {@link ServiceSim.background}. */
  background(name: string, body: (bg: BackgroundSim) => Promise<void>): void {
    if (this.host.clock !== undefined) return this.host.spawnBackground(name, body);
    // Real mode (serve): the process simply goes on, on the wall clock and
    // real timers of this request's environment; a real kill ends it.
    const env = this.env;
    const offset = () => this.host.faults.clockOffsetMs;
    const bg: BackgroundSim = {
      now: () => env.now() + offset(),
      sharedNow: () => env.now(),
      step: (label) => env.step(label),
      sleep: (ms) => env.sleep(ms),
      othersLive: () => true,
      alive: () => true,
    };
    const what = this.host.def.name;
    const host = this.host;
    host.backgroundLive++;
    void body(bg)
      .catch((e: unknown) => process.stderr.write(`retrysim serve: ${e instanceof ServiceError ? e.message : `${serviceWord(what)}: a timer of the process threw ${describeThrow(e)}`}\n`))
      .finally(() => host.backgroundLive--);
  }

  async step(label: string, footprint?: Footprint): Promise<void> {
    const def = this.host.def;
    if (!def.steps.includes(label)) throw new ServiceError(def.name, `handle called sim.step('${label}'), which is not declared in steps [${def.steps.join(', ')}]; declare every interleaving point`);
    if (this.db.inTransaction) throw new ServiceError(def.name, `sim.step('${label}') was called inside an open transaction (${this.req.method} ${this.req.path}); steps go between transactions, never inside one (a function given to db.transaction() runs synchronously: an async one runs up to its first await inside the transaction)`);
    if (this.awaitingOthers !== undefined) await this.rejoin(); // (tested first: an await costs the hot path even when there is nothing to wait for)
    // Which declared steps a run reached at all: a hosted app declares every store command, and uses a few.
    this.host.reached?.add(`step:${label}`);
    // What a late wait's message names (built once per step, the hot path).
    const what = `sim.step('${label}')`;
    this.refuseLateWait(what);
    this.countReach(label);
    this.lastStep = label;
    this.markPending(what);
    this.suspend();
    // What the request's code left unhandled so far ends its process before the step.
    if (this.host.probes && this.host.clock !== undefined) await this.probeCrash();
    // While a fault counter of this instance is armed, whichever request
    // reaches it first takes it: every phase may race for it, so none is
    // declared independent. Counters only count down, so once they are all
    // zero the service's own declaration is exact.
    const f = this.host.faults;
    const armed = f.crashMidRequest > 0 || f.loseResponseAfterCommit > 0 || (f.pause !== undefined && f.pause.count > 0);
    this.phase = armed ? undefined : footprint;
    await this.env.step(label, this.phase);
    const p = f.pause;
    // `nth`: this request's n-th reach of the step (counted only while the pause is armed for it).
    if (p && p.count > 0 && p.atStep === label && (p.nth === undefined || ++this.pauseReaches === p.nth)) {
      p.count -= 1;
      this.host.reached?.add(`pause@${label}`);
      if (p.nth !== undefined && p.nth > 1) this.host.reached?.add('fault:later-reach').add(`pause@${label}${REACH}${p.nth}`);
      if (p.thenCrash) this.crashAfterPause = true;
      // The whole process stalls, as in a GC pause: its timers (a heartbeat renewing this request's lease) do not fire meanwhile.
      if (this.host.clock !== undefined) this.host.pausedUntil = Math.max(this.host.pausedUntil, this.host.clock.kernel.now + p.ms);
      this.env.note?.(`paused ${p.ms} ms at step '${label}'${p.nth !== undefined && p.nth > 1 ? ` (its ${ordinal(p.nth)} reach in this request)` : ''}${p.thenCrash ? ', then crashes' : ''}`);
      await this.env.sleep(p.ms, this.phase);
    }
    // The rest of the phase runs after the sleeps: they touch what the phase declared.
    // `slowAtStepNth`: this request's n-th reach of the step (a hosted app's second `kv.set`, after the claim).
    if (f.slowMs > 0 && label === this.host.slowStep && !this.slowed && (f.slowAtStepNth === undefined || ++this.slowReaches === f.slowAtStepNth)) {
      this.slowed = true;
      this.host.reached?.add(`slow@${label}`);
      const later = f.slowAtStepNth !== undefined && f.slowAtStepNth > 1;
      if (later) this.host.reached?.add('fault:later-reach').add(`slow@${label}${REACH}${f.slowAtStepNth}`);
      this.env.note?.(`slow ${f.slowMs} ms after '${label}'${later ? ` (its ${ordinal(f.slowAtStepNth!)} reach in this request)` : ''}`);
      await this.env.sleep(f.slowMs, this.phase);
    }
    this.pendingWait = undefined;
    this.resume();
  }

  /**
   * A request's steps and sleeps are its kernel task's, and only while its
   * handler runs: a step reached by code the handler left running — a timer
   * callback after the answer, a listener or microtask racing the handler's
   * own return — has no task to wait on. Until 2026-12 it took over
   * whichever task was running: an outbox relay's step in a `setInterval`
   * stalled until another request came, and `check` wrote a counterexample
   * of the simulation (4 shipments for one order). Now the run stops, one
   * line naming it (exit 2). The clock stops the run too, since the throw
   * lands in code no one awaits.
   */
  private refuseLateWait(what: string): void {
    const clock = this.host.clock;
    if (clock === undefined) return;
    // (Two of the handler's own steps at once — a `Promise.all` of two
    // helpers that each step — are not refused: the kernel runs them one
    // after the other.)
    if (!this.answered) return;
    throw this.lateWait(what, clock);
  }

  private markPending(what: string): void {
    this.pendingWait = what;
    const k = this.host.clock?.kernel;
    this.pendingAt = k === undefined ? -1 : k.events + k.steps;
  }

  /**
   * @internal The handler returned while a step or sleep of this request
   * waits, one that began in this very turn: code the handler left queued
   * (an event listener's `queueMicrotask`) reached it as the handler
   * answered, so it is no part of the handler. One that began earlier is the
   * handler's own work, still in flight when a timer let the handler answer
   * (a gateway call raced against a timeout): the answer then waits for it,
   * as before.
   */
  steppedWhileReturning(): boolean {
    const k = this.host.clock?.kernel;
    return k !== undefined && this.pendingWait !== undefined && this.pendingAt === k.events + k.steps;
  }

  /** @internal The error for `what` (a step or sleep) reached outside the request's handler, after stopping the run with it. */
  lateWait(what: string, clock: KernelClock): ServiceError {
    const when = this.answered ? 'after its handler had answered' : 'while its handler was returning';
    const err = new ServiceError(this.host.def.name, `${what} was reached by work that ${this.req.method} ${this.req.path} (${this.name}) left running ${when} — a timer callback, an event listener, a queueMicrotask or a promise the handler did not await; a request steps and sleeps only while its handler runs: await that work before answering, or leave sim.step and sim.sleep out of it (a timer callback's SQL then runs at once)`);
    clock.abort(err);
    return err;
  }

  async sleep(ms: number): Promise<void> {
    if (!(Number.isFinite(ms) && ms >= 0)) throw new ServiceError(this.host.def.name, `sim.sleep(${ms}): expected a non-negative number of ms`);
    this.refuseWaitInTransaction(`called sim.sleep(${ms})`);
    return this.wait(ms);
  }

  private async wait(ms: number): Promise<void> {
    if (this.awaitingOthers !== undefined) await this.rejoin(); // (tested first: an await costs the hot path even when there is nothing to wait for)
    const what = `a wait of ${ms} ms`;
    this.refuseLateWait(what);
    this.markPending(what);
    this.suspend();
    await this.env.sleep(ms, this.phase);
    this.pendingWait = undefined;
    this.resume();
  }

  defer<T>(): Deferred<T> {
    const d = this.env.defer<T>();
    return {
      resolve: (v) => d.resolve(v),
      reject: (e) => d.reject(e),
      wait: async () => {
        // The waiter is the request running now, not necessarily the one that made this.
        const me = running;
        me?.refuseWaitInTransaction('waited on a sim.defer()');
        me?.suspend();
        try {
          return await d.wait();
        } finally {
          me?.resume();
        }
      },
    };
  }

  /**
   * @internal Lets Node report what the code left unhandled so far (one host
   * turn), and crashes the process on the first such rejection
   * ({@link ServiceHost.crash}); simulation only. Called while suspended.
   */
  async probeCrash(): Promise<void> {
    if (this.host.clock === undefined) return;
    const r = await probeRejection();
    if (r !== undefined) await this.crashProcess(r.reason);
  }

  /**
   * @internal The process dies of `reason`, an error nothing handled: in
   * simulation the kill lands before this request runs on, and this call
   * never returns. Elsewhere (real mode) it returns, and the caller says what
   * Node would do.
   */
  async crashProcess(reason: unknown, kind?: CrashKind): Promise<void> {
    if (!this.host.crash(reason, kind)) return;
    this.env.note?.('dies with its process');
    await this.env.sleep(0, undefined);
    throw new ServiceError(this.host.def.name, `request ${this.name} ran on after its process crashed (${describeThrow(reason)}); this is a retrysim bug`);
  }

  crashPoint(label: string): void {
    const def = this.host.def;
    if (!(def.crashPoints ?? []).includes(label)) throw new ServiceError(def.name, `handle called sim.crashPoint('${label}'), which is not declared in crashPoints [${(def.crashPoints ?? []).join(', ')}]`);
    if (this.crashAfterPause) {
      this.crashAfterPause = false;
      this.host.reached?.add(`crash@${label}`);
      this.env.note?.(`crash at '${label}' (after the pause)`);
      throw new CrashFault(`${label} (after a pause)`);
    }
    this.countReach(label);
    const f = this.host.faults;
    // `crashAtNth`: this request's n-th reach of crashAt (the reaches are counted only while a crash is armed).
    const nth = f.crashAt === label ? f.crashAtNth : undefined;
    if ((f.crashAt === undefined || f.crashAt === label) && f.crashMidRequest > 0 && (nth === undefined || ++this.crashReaches === nth) && fire(f, 'crashMidRequest')) {
      this.host.reached?.add(`crash@${label}`);
      if (nth !== undefined && nth > 1) this.host.reached?.add('fault:later-reach').add(`crash@${label}${REACH}${nth}`);
      // On the trace where it strikes, also at a first reach: a handler that
      // catches the exception (its own retry helper, a cleanup that answers
      // 200) would otherwise hide the counterexample's one fault. A hosted
      // app's store says it in its own line at a first reach (serve-request.ts).
      if (nth !== undefined && nth > 1) this.env.note?.(`crash at '${label}' (its ${ordinal(nth)} reach in this request)`);
      else if (!isHostedApp(def)) this.env.note?.(`crash at '${label}'`);
      throw new CrashFault(label);
    }
  }

  /**
   * Counts this request's reach of a step or crash point: a 2nd to 4th reach
   * (`step:kv.set#2`) puts the faults at that reach into the campaign's
   * coverage table, so a campaign that never lost the answer of an app's
   * second `SET` says so instead of "every situation reached".
   */
  private countReach(label: string): void {
    const reached = this.host.reached;
    if (reached === undefined) return;
    const n = (this.reaches.get(label) ?? 0) + 1;
    this.reaches.set(label, n);
    if (n >= 2 && n <= REACH_MAX) reached.add(`step:${label}${REACH}${n}`);
  }

  reached(label: string): void {
    const def = this.host.def;
    if (!(def.situations ?? []).includes(label)) throw new ServiceError(def.name, `handle called sim.reached('${label}'), which is not declared in situations [${(def.situations ?? []).join(', ')}]`);
    this.host.reached?.add(`service:${label}`);
  }
}
