import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import inject from 'light-my-request';
import type { Response as InjectResponse } from 'light-my-request';
import { CrashFault } from '../tracker/faults.js';
import { hostTurn, hostWait } from '../sim/host-turns.js';
import { takeRejection } from '../sim/rejections.js';
import type { Footprint } from '../sim/footprint.js';
import type { BackgroundSim, ServiceRequest, ServiceResponse, ServiceSim } from '../service/definition.js';
import type { Deferred } from '../tracker/env.js';
import { ServiceError, describeThrow, ofTheRun, userFrame } from '../service/errors.js';
import { AppListensError } from './no-listen.js';
import { setRefusalSink } from './refusals.js';
import { kvClient, kvTraceWords, setKvScopeSink, setKvSink, unsupportedText, type KvCommand, type KvSink } from '../kv/client.js';
import type { KvStore } from '../kv/store.js';
import type { AppDescriptor, RequestListener } from './descriptor.js';
import { firingTimer, InstanceClock, type TimerKind } from './instance-clock.js';
import { deliveryHint, FACTORY_AS_LISTENER_TEXT, FETCH_HANDLER_TEXT, isFetchResponse, notAListenerText } from './listener-shape.js';

/** Turns in a row with nothing to do before a request counts as settled (a library may hold a real immediate it captured at import). */
const QUIET_TURNS = 2;
/** A limit on one request's turns (DESIGN invariant 4). */
const TURNS_MAX = 20_000;
/** Response headers that carry the machine's wall clock or the connection, not the app's answer. */
const DROPPED_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

/** One process of a hosted app: its machine (clock, randomness) and its listener, built on first use. */
export class AppInstance {
  /** With one module load per process: this process's copy of the app's module (see src/app/per-process.ts). */
  constructor(readonly fresh?: () => Promise<AppDescriptor>) {}
  clock: InstanceClock | undefined;
  listener: Promise<RequestListener> | undefined;
  /** Requests of this process being pumped and not parked (see {@link park}). */
  working = 0;
  /**
   * Requests parked with nothing of their own to do: their app code awaits
   * something only another request of this process can settle (an
   * in-process single flight: a duplicate awaits the first request's
   * promise). Each waits on a deferred the scheduler knows about.
   */
  readonly parked: Array<Deferred<void>> = [];
  /** Whether this process's timer task runs (see {@link runTimers}). */
  timersRunning = false;
  /** Timers of this process with an id up to this one were armed while the run was live (by a request, or a callback while one ran). */
  liveTimerMark = 0;

  /** Another request of this process moved (or ended): every parked one looks again. */
  wakeParked(): void {
    for (const d of this.parked.splice(0)) d.resolve();
  }
}

/**
 * Entering and leaving one turn of app code (a request's, or its process's
 * timers'): the instance's clock, and the store commands' sink and owner.
 */
function turnOf(clock: InstanceClock, pending: Pending): { enter: () => void; leave: () => void } {
  return {
    enter: () => {
      clock.enter();
      setKvSink(pending);
      setRefusalSink(pending.refuse);
      turnOwner = pending;
    },
    leave: () => {
      turnOwner = undefined;
      setKvSink(undefined);
      setRefusalSink(undefined);
      clock.leave();
    },
  };
}

/** Whose turn of app code runs now (a request's, or a process's timer task's): the sink its store commands go to. */
let turnOwner: Pending | undefined;

/**
 * The request whose code runs, by async context: a command its code sends
 * after awaiting a timer goes to its own queue even when the timer fired in
 * another request's turn (two requests sleeping until one instant: the
 * first turn fired both timers, and the other's commands were traced and
 * stepped as this one's; until 2026-12). A request that has ended (work
 * it left behind) and code outside any request send to the turn's sink.
 */
const requestScope = new AsyncLocalStorage<Pending>();
setKvScopeSink(() => {
  const p = requestScope.getStore();
  return p !== undefined && p.live ? p : undefined;
});

/** The same for an exception a timer callback threw. */
function uncaughtText(where: string, error: unknown): string {
  return `a timer callback of the app threw ${where}: ${describeThrow(error)}; Node ends the process on an uncaught exception: catch it inside the callback`;
}

/** What the app's process does with a rejection nothing handled, where no simulated network can crash it (real mode takes Node's own path). */
function unhandledText(where: string, reason: unknown): string {
  return `the app left a promise rejection unhandled ${where}: ${describeThrow(reason)}; Node (--unhandled-rejections=throw, its default) crashes the process here: add a .catch() or await it inside a try`;
}

class Pending implements KvSink {
  /** Whether its request's task still serves it (its queue is read). */
  live = true;
  /** The first node-redis method the app called that the simulated store does not have. */
  missing: string | undefined;
  unsupported(method: string): void {
    this.missing ??= method;
  }
  /** The first thing the app did that a simulated process may not (refusals.ts): its one-line text. */
  refused: string | undefined;
  readonly refuse = (text: string): void => {
    this.refused ??= text;
  };
  readonly queue: Array<{ c: KvCommand; resolve: (v: unknown) => void; reject: (e: unknown) => void; timer: TimerKind | undefined }> = [];
  submit(c: KvCommand): Promise<unknown> {
    const timer = firingTimer();
    return new Promise((resolve, reject) => this.queue.push({ c, resolve, reject, timer }));
  }
}

function hashSeed(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/**
 * What the phase after a store command may touch: the command's keys (an
 * EXEC's: every queued command's and every watched key's), and the
 * instance's memory unless the app is stateless. WATCH and EXEC also read
 * and change the connection's watched keys, which the process's requests
 * share (its one client): they touch its memory even in a stateless app.
 */
function footprintOf(c: KvCommand, instance: string, stateless: boolean): Footprint {
  const keys = c.keys.map((k) => `kv:${k}`);
  const mem = stateless && c.name !== 'watch' && c.name !== 'exec' ? [] : [`app:${instance}`];
  return c.write ? { writes: [...keys, ...mem] } : { reads: keys, writes: mem };
}

/** The lost answer the app's store client sees when the crash fault fires at a command: what a dropped connection gives node-redis. */
export class KvConnectionLost extends Error {
  constructor(cmd: string) {
    super(`Socket closed unexpectedly (retrysim: the answer to ${cmd} was lost after the store ran it)`);
    this.name = 'SocketClosedUnexpectedlyError';
    // No frames: they would be retrysim's own (its bundle's file names and
    // lines), and an app that shows the stack in its 500 page (Express in
    // development) would put them in the answer, so a trace's hash would
    // change with every build of retrysim.
    this.stack = `${this.name}: ${this.message}`;
  }
}

/**
 * Serves one request on a hosted app: delivers it through light-my-request
 * (real IncomingMessage/ServerResponse objects, in process), then pumps the
 * app: lets one host turn pass (every nextTick and microtask of the app
 * runs), and whenever the app waits, gives it what it waits for — a store
 * command after an interleaving point (`sim.step('kv.<cmd>')`), its due
 * immediates, or its next timer after a virtual sleep. App code therefore
 * only runs while this request's task holds the kernel. The answer goes out
 * once the response has ended and the app has nothing more to do for it
 * (a library that records the response after sending it does so first).
 */
export async function serveRequest(desc: AppDescriptor, inst: AppInstance, store: KvStore, req: ServiceRequest, sim: ServiceSim<AppInstance>): Promise<ServiceResponse> {
  inst.clock ??= new InstanceClock(sim.now(), hashSeed(`${sim.instance}@${Math.floor(sim.now())}`), sim.identity);
  const clock = inst.clock;
  const pending = new Pending();
  const { enter, leave } = turnOf(clock, pending);
  // Whether the process is stalled by a pause now (another request of it was paused at a step): its timers wait.
  const frozen = () => (sim.frozenUntil?.() ?? Number.NEGATIVE_INFINITY) > (sim.sharedNow?.() ?? Number.POSITIVE_INFINITY);
  let out: { ok: true; value: InjectResponse } | { ok: false; error: unknown } | undefined;
  inst.working++;
  // Leaving the kernel to another task: whatever this request's turns did
  // (a store answer, a timer) may have settled what a parked request awaits.
  const yieldTo = () => {
    inst.wakeParked();
    leave();
  };
  enter();
  try {
    clock.advanceTo(sim.now(), frozen());
    if (inst.listener === undefined && inst.fresh !== undefined) {
      // This process's own copy of the module graph. Loading it is real
      // I/O, but this request's task holds the kernel throughout (no step
      // is taken), so no other task runs and virtual time stands still:
      // the run is the same whatever the load takes. The module's top
      // level runs on this instance's clock, as app() does.
      let own: AppDescriptor;
      try {
        own = await hostWait(inst.fresh);
      } catch (e) {
        throw new ServiceError(desc.name, `cannot load the app afresh for a simulated process: ${describeThrow(e)}`);
      }
      if (inst.listener === undefined) inst.listener = buildProcess(desc.name, own);
    }
    if (inst.listener === undefined) inst.listener = buildProcess(desc.name, desc);
    const listener = inst.listener;
    // What the listener returned: a fetch-style handler answers with a Response and writes nothing to res.
    let returned: unknown;
    // The listener runs in this request's async context (light-my-request may call it from an immediate, which
    // the instance's fake clock runs outside any context): what its code sends later is this request's.
    const deliver = (l: RequestListener) => {
      const once = finishingOnce(l, (x) => (returned = x));
      const scoped: RequestListener = (q, r) => requestScope.run(pending, () => once(q, r));
      return inject(scoped as never, { method: req.method as 'POST', url: req.path, headers: { ...req.headers } as Record<string, string>, payload: req.body });
    };
    // Requests that reach a process while app() is still building (its boot
    // awaits a timer) all await this one promise, and their continuations
    // run in whichever turn settles it. A request delivered in another's
    // turn would send its store commands to that request's queue (and hang
    // once that one has answered): it starts in its own turn instead.
    let deferred: (() => void) | undefined;
    void listener
      .then((l) => {
        if (typeof l !== 'function') throw new ServiceError(desc.name, notAListenerText(l));
        if (turnOwner !== pending) return new Promise<InjectResponse>((resolve, reject) => (deferred = () => void deliver(l as RequestListener).then(resolve, reject)));
        return deliver(l as RequestListener);
      })
      .then((value) => (out = { ok: true, value }), (error) => (out = { ok: false, error }));
    let quiet = 0;
    // The turn this request last woke from parking at (none yet).
    let wokeAt = Number.NEGATIVE_INFINITY;
    for (let turn = 0; ; turn++) {
      if (turn >= TURNS_MAX) throw ofTheRun(new ServiceError(desc.name, `${req.method} ${req.path}: the app kept working for ${TURNS_MAX} turns without answering (a loop of immediates?)`));
      await hostTurn();
      if (deferred !== undefined) {
        const start = deferred;
        deferred = undefined;
        start();
        quiet = 0;
        continue;
      }
      // Whatever the app did with the exception (a framework answers 500), the run cannot say anything about this app.
      if (pending.missing !== undefined) throw new ServiceError(desc.name, `${req.method} ${req.path}: ${unsupportedText(pending.missing)}`);
      if (pending.refused !== undefined) throw new ServiceError(desc.name, `${req.method} ${req.path}: ${pending.refused}`);
      // Only this request's code ran in the turn: a rejection it left unhandled ends the process, as in Node.
      const rejected = takeRejection();
      if (rejected !== undefined) {
        leave();
        await sim.crashProcess?.(rejected.reason); // in simulation, never returns
        enter();
        throw new ServiceError(desc.name, unhandledText(`while serving ${req.method} ${req.path}`, rejected.reason));
      }
      // A timer callback of the process threw (in this turn's clock ticks): Node ends the process on an uncaught exception.
      const thrown = clock.takeUncaught();
      if (thrown !== undefined) {
        leave();
        await sim.crashProcess?.(thrown.error, 'uncaught exception'); // in simulation, never returns
        enter();
        throw new ServiceError(desc.name, uncaughtText(`while serving ${req.method} ${req.path}`, thrown.error));
      }
      const next = pending.queue.shift();
      if (next !== undefined) {
        quiet = 0;
        const label = `kv.${next.c.name}`;
        // A timer of the process (a cleanup job the app started) fires in whichever request's turn is running: its command is not that request's.
        if (next.timer !== undefined) sim.note?.(`set${next.timer} callback of the app (not this request) sends ${label}`);
        yieldTo();
        await sim.step(label, footprintOf(next.c, sim.instance, desc.stateless === true));
        enter();
        clock.advanceTo(sim.now(), frozen());
        let value: unknown;
        try {
          // The store is one server for every instance: its TTLs run on its
          // own clock, not on the calling instance's skewed one (a Redis
          // `SET … PX` expires by the Redis host's time).
          value = next.c.run(store, sim.sharedNow?.() ?? sim.now());
        } catch (e) {
          const said = kvTraceWords(next.c, { error: e });
          sim.detail?.(label, said.call, said.answer);
          next.reject(e);
          continue;
        }
        // The step's line says on what and with which answer (`kv.set order:k1 … → OK`); shown, not hashed.
        const said = kvTraceWords(next.c, { value });
        sim.detail?.(label, said.call, said.answer);
        try {
          sim.crashPoint(`${label}: answer lost`);
        } catch (e) {
          if (!(e instanceof CrashFault)) throw e;
          // On the trace where it strikes: an app that catches the error and answers its own 500 would otherwise hide the fault.
          sim.note?.(`${label}: answer lost (the store ran it; the app's client saw SocketClosedUnexpectedlyError)`);
          next.c.lost?.();
          next.reject(new KvConnectionLost(next.c.verb ?? next.c.name.toUpperCase()));
          continue;
        }
        next.resolve(value);
        continue;
      }
      if (clock.runDue()) {
        quiet = 0;
        continue;
      }
      if (out !== undefined) {
        if (++quiet >= QUIET_TURNS) break;
        continue;
      }
      const wait = clock.untilNextTimer();
      if (wait !== undefined) {
        quiet = 0;
        yieldTo();
        await sim.sleep(wait);
        enter();
        clock.advanceTo(sim.now(), frozen());
        continue;
      }
      if (++quiet >= QUIET_TURNS + 1) {
        if (inst.working > 1) {
          // Another request of this process is still at work: it may settle
          // what this one awaits (Node would simply wait). Park until it
          // moves; when none is left at work, the wait is on nothing.
          const d = sim.defer<void>();
          inst.working--;
          // Only a request that moved since it woke may have settled what the
          // others await: two parked requests that woke each other for
          // nothing kept the kernel busy at one instant, so a third, asleep on
          // virtual time (the slow fault), never woke to settle theirs.
          if (turn - wokeAt > QUIET_TURNS + 1) inst.wakeParked();
          inst.parked.push(d);
          leave();
          await d.wait();
          enter();
          wokeAt = turn;
          inst.working++;
          clock.advanceTo(sim.now(), frozen());
          quiet = 0;
          continue;
        }
        // Not waiting on anything: a listener that answered with a Response (Hono's app.fetch handed over as is) is the likelier story.
        let answered: unknown;
        void Promise.resolve(returned).then((x) => (answered = x), () => undefined);
        await hostTurn();
        if (isFetchResponse(answered)) throw new ServiceError(desc.name, FETCH_HANDLER_TEXT);
        // A factory handed over as the listener answers nothing and returns what it builds (a listener, an app).
        if (typeof answered === 'function') throw new ServiceError(desc.name, FACTORY_AS_LISTENER_TEXT);
        throw ofTheRun(new ServiceError(desc.name, `never answered ${req.method} ${req.path}: the app waits on neither the store, a timer nor an immediate (real I/O — a file read, a dynamic import(): import the module at the top of the file instead —, a real database or network client, or a promise nobody resolves); it cannot run on virtual time`));
      }
    }
  } finally {
    pending.live = false;
    inst.working--;
    inst.wakeParked();
    leave();
  }
  // Work the app deferred past its answer (a 202 whose job a setTimeout
  // runs) goes on in the process after the answer leaves, whether or not
  // another request ever reaches this instance.
  inst.liveTimerMark = Math.max(inst.liveTimerMark, clock.lastTimerId());
  // Only once no request of the process is at work: a request still at work fires the process's timers in its
  // own turns (and waits on them). A timers task started beside it fired that request's own `await sleep()`, so
  // its continuation ran in the timers task and the request, woken with nothing due, read as never answered
  // (a correct app polling its key every 100 ms, @node-idempotency's wait: true; until 2026-12).
  if (clock.nextOneShot() !== undefined && !inst.timersRunning && inst.working === 0 && sim.background !== undefined) {
    inst.timersRunning = true;
    sim.background('timers', (bg) => runTimers(desc, inst, clock, store, bg).finally(() => (inst.timersRunning = false)));
  }
  const o = out!;
  if (!o.ok) {
    if (o.error instanceof StartupFault) {
      // The app's start-up awaited a store command whose answer a fault lost: its `await app()` rejects at the top
      // of the process, which Node ends (an unhandled rejection). The process crashes and restarts as after any
      // crash, and builds itself again; it read "app({ redis }) threw while building a process", exit 2 — a
      // correct app that loads its price list at start-up was called broken by the campaign's own fault.
      await sim.crashProcess?.(o.error.cause); // in simulation, never returns
      throw new ServiceError(desc.name, `app({ redis }) threw while building a process: ${describeThrow(o.error.cause)}`);
    }
    if (o.error instanceof ServiceError) throw o.error;
    throw new ServiceError(desc.name, `delivering ${req.method} ${req.path} failed: ${describeThrow(o.error)}${deliveryHint(o.error)}`);
  }
  return toServiceResponse(o.value);
}

/** ` (at file:line)` of the app's own frame that threw, or nothing. */
function at(e: unknown): string {
  const f = userFrame(e);
  return f === undefined ? '' : ` (at ${f})`;
}

/** The app's factory failed on a fault the campaign injected (a store answer lost): the process's start-up crashes. */
class StartupFault extends Error {
  constructor(override readonly cause: KvConnectionLost) {
    super(`app({ redis }) failed at start-up: ${cause.message}`);
    this.name = 'StartupFault';
  }
}

/**
 * One process's listener: `app({ redis })`, called on its first request. An
 * exception from the factory is the factory's, said so: it read "delivering
 * POST /orders failed", as if the request had broken the app.
 */
function buildProcess(name: string, desc: AppDescriptor): Promise<RequestListener> {
  const built = Promise.resolve()
    .then(() => desc.app({ redis: kvClient() }))
    .catch((e: unknown) => {
      if (e instanceof AppListensError) throw new ServiceError(name, `app({ redis }) ${e.message}${at(e)}`);
      if (e instanceof KvConnectionLost) throw new StartupFault(e);
      throw e instanceof ServiceError ? e : new ServiceError(name, `app({ redis }) threw while building a process: ${describeThrow(e)}`);
    });
  built.catch(() => undefined);
  return built;
}

/**
 * The process's own task for its pending one-shot timers once a request
 * answered: sleeps on virtual time until the next one, fires it (and
 * whatever interval is due by then) and carries out the store commands its
 * callbacks send, each an interleaving point, as a request's are. Like a
 * service's timers, a one-shot timer armed while the run was live fires; one
 * armed after every other task ended (a setTimeout that re-arms itself) and
 * any interval stop with the run. A kill ends the task with the process.
 */
async function runTimers(desc: AppDescriptor, inst: AppInstance, clock: InstanceClock, store: KvStore, bg: BackgroundSim): Promise<void> {
  const pending = new Pending();
  const { enter, leave } = turnOf(clock, pending);
  for (let turn = 0; turn < TURNS_MAX; turn++) {
    if (!bg.alive()) return;
    // A request of the process is at work again: its turns fire the timers; the last to answer starts this task anew.
    if (inst.working > 0) return;
    // Read before entering: in real mode the time is the wall clock, which the instance's own Date hides while entered.
    const now = bg.now();
    // A paused process runs no timer: wait until the pause is over.
    const until = bg.frozenUntil?.();
    if (until !== undefined && until > bg.sharedNow()) {
      await bg.sleep(until - bg.sharedNow());
      continue;
    }
    enter();
    try {
      clock.advanceTo(now);
      await hostTurn();
      if (pending.missing !== undefined) throw new ServiceError(desc.name, `a timer of the app: ${unsupportedText(pending.missing)}`);
      if (pending.refused !== undefined) throw new ServiceError(desc.name, `a timer of the app: ${pending.refused}`);
      const rejected = takeRejection();
      if (rejected !== undefined) {
        leave();
        await bg.crash?.(rejected.reason); // in simulation, never returns
        enter();
        throw new ServiceError(desc.name, unhandledText('in a timer callback', rejected.reason));
      }
      const thrown = clock.takeUncaught();
      if (thrown !== undefined) {
        leave();
        await bg.crash?.(thrown.error, 'uncaught exception'); // in simulation, never returns
        enter();
        throw new ServiceError(desc.name, uncaughtText("in the process's own timer task (after its answers)", thrown.error));
      }
      if (bg.othersLive()) inst.liveTimerMark = Math.max(inst.liveTimerMark, clock.lastTimerId());
      const next = pending.queue.shift();
      if (next !== undefined) {
        const label = `kv.${next.c.name}`;
        leave();
        await bg.step(label, footprintOf(next.c, 'timers', false));
        if (!bg.alive()) return;
        const at = bg.now();
        enter();
        clock.advanceTo(at, (bg.frozenUntil?.() ?? Number.NEGATIVE_INFINITY) > bg.sharedNow());
        try {
          const value = next.c.run(store, bg.sharedNow());
          const said = kvTraceWords(next.c, { value });
          bg.detail?.(label, said.call, said.answer);
          next.resolve(value);
        } catch (e) {
          const said = kvTraceWords(next.c, { error: e });
          bg.detail?.(label, said.call, said.answer);
          next.reject(e);
        }
        continue;
      }
      if (clock.runDue()) continue;
      // Timers armed after the run ended (a 1 ms poll re-armed by its own callback) fire on the way, but do not keep the task going.
      const t = clock.nextOneShot(inst.liveTimerMark);
      if (t === undefined) return;
      leave();
      await bg.sleep(Math.max(0, t.callAt - clock.clock.now));
    } finally {
      leave();
    }
  }
}

/**
 * A response emits 'finish' once, as Node's does on a real socket.
 * light-my-request emits it itself as `end()` returns, and Node's
 * ServerResponse emits it again once its null socket's write callback has
 * run — an immediate the instance's clock holds until its next turn, which
 * may be another request's: a listener (`res.on('finish', …)`: a logger, a
 * middleware that releases its key or stores the answer there) would run
 * twice, the second time on another request's trace. The first one stays:
 * it comes where Node's would, once the answer is written.
 */
function finishOnce(res: ServerResponse): void {
  const emit = res.emit;
  let finished = false;
  res.emit = function (this: ServerResponse, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'finish') {
      if (finished) return false;
      finished = true;
    }
    return emit.call(this, event, ...args);
  } as ServerResponse['emit'];
}

/**
 * The listener, with each response's 'finish' emitted once ({@link finishOnce})
 * and what it returned handed to `onReturn`.
 * light-my-request recognises an Express app by `app.request.app === app`
 * and puts its own Request and Response prototypes under Express's (so
 * Express's `res.end` is light-my-request's); it cannot see the app through
 * this wrapper, so the wrapper does the same, from the objects it made.
 */
function finishingOnce(l: RequestListener, onReturn: (value: unknown) => void): RequestListener {
  const express = (l as { request?: { app?: unknown } }).request?.app === l ? (l as unknown as { request: object; response: object }) : undefined;
  return (q, r) => {
    pinMethods(q);
    pinMethods(r);
    if (express !== undefined) {
      Object.setPrototypeOf(Object.getPrototypeOf(express.request), Object.getPrototypeOf(q));
      Object.setPrototypeOf(Object.getPrototypeOf(express.response), Object.getPrototypeOf(r));
    }
    finishOnce(r);
    const value = l(q, r);
    onReturn(value);
    return value;
  };
}

/**
 * Copies the methods light-my-request's Request and Response define (the
 * response's `write`, `end`, `writeHead`, …, which capture the answer) onto
 * the objects themselves. Express moves each request and response under its
 * own prototypes (`Object.setPrototypeOf(res, app.response)`, whose chain
 * ends at Node's ServerResponse); light-my-request links those to its own
 * only when the listener is the Express app itself, so behind any wrapper
 * (`(req, res) => app(req, res)`, a logger, a tenant mapping) the answer was
 * written to nowhere: `answer 201 {"body":""}`, or a request kept working
 * 20,000 turns. Own properties survive the swap; Express defines none of
 * these names, and an app that replaces one (`res.end = …`) still can.
 */
function pinMethods(o: object): void {
  const proto = Object.getPrototypeOf(o) as object;
  for (const k of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, k)!;
    if (k === 'constructor' || typeof d.value !== 'function' || Object.prototype.hasOwnProperty.call(o, k)) continue;
    Object.defineProperty(o, k, { value: d.value, writable: true, configurable: true, enumerable: false });
  }
}

function toServiceResponse(r: InjectResponse): ServiceResponse {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) {
    if (v === undefined || DROPPED_HEADERS.has(k.toLowerCase())) continue;
    headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return { status: r.statusCode, headers, body: r.payload };
}
