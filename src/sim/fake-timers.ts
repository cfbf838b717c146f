import FakeTimers from '@sinonjs/fake-timers';
import type { Kernel, Task } from './kernel.js';
import type { Prng } from '../random/prng.js';
import { watchdog, type Watchdog } from './watchdog.js';
import { hostTurn, hostTurnPending } from './host-turns.js';
import { armRejections, disarmRejections, dropRejections, takeRejection } from './rejections.js';
import { seedNodeCrypto, uuidFrom } from './seeded-node-crypto.js';
import { identifyProcessesBy, type ProcessIdentity } from './process-identity.js';
import './virtual-node-timers.js';
import { PROMPT_SUBTLE, promptSubtle } from './sync-subtle.js';
import { answerThreadPoolWhile } from './sync-thread-pool.js';
import { timeoutSignal } from './virtual-abort-timeout.js';
import { FiringScope, rootScope } from './timer-firing.js';
import { MachineDate, machineDateNowMs } from './load-clock.js';
import { isThenable } from './thenable.js';

/**
 * The fake-timers bridge: runs *unmodified* code that uses setTimeout,
 * setInterval, Date and performance.now on the kernel's virtual clock, via
 * @sinonjs/fake-timers. One implementation of a retrying client can therefore
 * run for real and in simulation, and a wall-clock test can be replayed in
 * virtual time.
 *
 * How it works: inside a kernel task we install a fake clock (never faking
 * nextTick or queueMicrotask — that hangs promise-based code and vitest),
 * start the code, and then repeatedly (1) let its promise chains settle,
 * (2) find the earliest fake timer, (3) sleep the kernel task until that
 * virtual time — so other kernel tasks interleave correctly — and (4) tick
 * the fake clock to fire it. The code sees virtual time pass; the host sees
 * milliseconds.
 *
 * Only one bridged computation may be active at a time, because the fake
 * clock replaces process globals.
 */
export interface BridgeOptions {
  /** Limit on fired timer rounds; a runaway setInterval hits it. Default 100,000. */
  roundsMax?: number;
  /** The wall-clock instant of virtual time 0 that `Date` reads (a user's service: src/sim/epoch.ts). Default 0. */
  epochMs?: number;
}

let active = false;
/** The active bridge's fake clock (for {@link awaitPendingTimers}). */
let activeClock: FakeTimers.Clock | undefined;

// Captured before any fake clock is installed: the bridge needs the real
// setImmediate to let promise chains settle between timer rounds. This is
// not a read of real time — it only orders host-level work.
const realSetImmediate = globalThis.setImmediate; // real-time: allowed (microtask drain, no time read)
/** Captured at load: a test's or an app's replacement of the global must not decide when a scope is left. */
const realQueueMicrotask = globalThis.queueMicrotask;

function settle(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

/** fake-timers keeps pending timers in `clock.timers` (id → { callAt, interval for a setInterval }); it has no public "peek" that does not also fire one. */
function pendingTimers(clock: FakeTimers.Clock): Iterable<{ callAt: number; interval?: number }> {
  return (clock as unknown as { timers?: Map<number, { callAt: number; interval?: number }> }).timers?.values() ?? [];
}

function earliestTimer(clock: FakeTimers.Clock): number | undefined {
  let min: number | undefined;
  for (const t of pendingTimers(clock)) if (min === undefined || t.callAt < min) min = t.callAt;
  return min;
}

/**
 * From inside a bridged computation ({@link runOnVirtualTime}): resolves
 * once every one-shot timer pending now has fired, on virtual time (no real
 * waiting). What those callbacks arm in turn, and intervals, are left — as
 * the kernel's clock does at the end of a simulated run, where a one-shot
 * timer armed while the run was live still fires and one armed after, or an
 * interval, dies with the run. For a test that judges what a service
 * finished after answering (a 202 whose effect a setTimeout writes): the
 * simulation counts that work as part of the run.
 *
 * @example
 * await Promise.all(workers);
 * await awaitPendingTimers(); // the handler's deferred write has run
 */
export async function awaitPendingTimers(): Promise<void> {
  const clock = activeClock;
  if (clock === undefined) throw new Error('awaitPendingTimers: no bridged computation is active (call it from inside runOnVirtualTime)');
  let last: number | undefined;
  for (const t of pendingTimers(clock)) if (typeof t.interval !== 'number' && (last === undefined || t.callAt > last)) last = t.callAt;
  if (last === undefined) return;
  // Armed after them, so at the same instant it fires after them (fake-timers orders ties by arming).
  await new Promise((resolve) => clock.setTimeout(resolve, Math.max(0, last - clock.now)));
}

/**
 * Runs `fn` (which may use the real timer APIs) on virtual time, from inside
 * a kernel task. Resolves with its result once it settles.
 *
 * @example
 * k.spawn('client', () => runOnVirtualTime(k, () => realRetryingClient()));
 */
export async function runOnVirtualTime<T>(kernel: Kernel, fn: () => Promise<T>, opts: BridgeOptions = {}): Promise<T> {
  if (active) throw new Error('runOnVirtualTime: another bridged computation is already active (the fake clock is process-global)');
  active = true;
  const clock = FakeTimers.withGlobal(globalThis).install({
    now: kernel.now + (opts.epochMs ?? 0),
    // An explicit list: nextTick, queueMicrotask and setImmediate stay real.
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
  });
  activeClock = clock;
  try {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    fn().then(
      (value) => (outcome = { ok: true, value }),
      (error) => (outcome = { ok: false, error }),
    );
    const roundsMax = opts.roundsMax ?? 100_000;
    for (let round = 0; ; round++) {
      await settle();
      if (outcome !== undefined) break;
      if (round >= roundsMax) throw new Error(`runOnVirtualTime: limit roundsMax=${roundsMax} reached (a timer that keeps re-arming?) at t=${kernel.now} ms, seed ${kernel.seed}`);
      const next = earliestTimer(clock);
      if (next === undefined) {
        throw new Error('runOnVirtualTime: the code is waiting, but not on a timer (real I/O or a promise nobody resolves); it cannot run on virtual time');
      }
      const delay = Math.max(0, next - clock.now);
      await kernel.sleep(delay);
      clock.tick(delay);
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  } finally {
    clock.uninstall();
    activeClock = undefined;
    active = false;
  }
}

// ------------------------------------------------------------ the kernel clock

/**
 * Code that runs on the kernel's clock: a user's service handler, a hosted
 * Node app. While a scope is *entered* (see {@link KernelClock.enter}),
 * `Date`, `performance.now`, the timer functions, `Math.random` and
 * `crypto.randomUUID`/`getRandomValues` read the kernel's time and the
 * scope's seeded stream, and `process.pid`, `process.ppid` and
 * `os.hostname()` its process's {@link ClockScope.identity}; outside every scope they
 * are the real ones (or whatever was installed before, such as the client
 * bridge's fakes).
 */
export interface ClockScope {
  /** Names the scope in messages: a request's task name (`s0/op1.w0#1`). */
  readonly name: string;
  /** This scope's wall-clock skew: `Date.now()` is `floor(kernel.now + offsetMs)`. */
  readonly offsetMs: number;
  /** The stream behind Math.random, crypto.randomUUID and crypto.getRandomValues. */
  readonly rng: Prng;
  /**
   * Which simulated process the scope's code runs in (src/sim/process-identity.ts):
   * several instances share one Node process, and code that names a lock's
   * owner by hostname and pid must see each its own. Undefined: the real one.
   */
  readonly identity?: ProcessIdentity;
  /** Where the scope's code is, for messages (a request's last step); optional. */
  where?(): string;
  /**
   * Waits `ms` of kernel time from inside the scope's kernel task (it is the
   * running task), leaving the scope while parked. Called when the scope's
   * code is idle, awaiting one of its own timers.
   */
  park(ms: number): Promise<void>;
  /**
   * The scope's code is idle with no timer of its own: if another scope of
   * its process is at work and may settle what it awaits (an in-process
   * single flight: a duplicate awaits the first request's promise), park
   * its task until that code runs again, and answer true. False: nothing
   * else could settle it. Optional: without it, such a wait is stuck.
   */
  parkOnOthers?(): boolean;
  /**
   * A timer callback of the scope threw, and nothing catches it there: in
   * Node that is an uncaught exception and the process dies. True when the
   * scope's process crashed for it (a hosted service: killed, restarted,
   * the run judged); false or absent: the run stops with a
   * {@link TimerCallbackError}. `kind`: how Node names it, 'uncaught
   * exception' (a throw, the default) or 'unhandled rejection' (the promise
   * an async callback returned rejected).
   */
  uncaught?(error: unknown, kind?: UncaughtKind): boolean;
  /**
   * Kernel time until which the scope's process is stalled (a GC pause
   * stops its whole event loop), or undefined / not after now: not stalled.
   * Its timers that come due meanwhile fire when the stall ends, after the
   * stalled code has run on, as Node's timers phase does. Optional.
   */
  frozenUntil?(): number | undefined;
  /**
   * Whether the scope's own kernel task is still running its code (a
   * request whose handler has not answered yet): what one of its timers
   * resolves runs on in that task's turns, as the handler's own work (a
   * gateway call raced against a timeout). False or absent: nothing of the
   * scope runs in a task (a process's `memory()`, a request that answered),
   * and what a firing resolved runs right after the firing, in the scope.
   */
  busy?(): boolean;
}

/** How Node names an error nothing caught in a timer callback. */
export type UncaughtKind = 'uncaught exception' | 'unhandled rejection';

/** The code read the clock many times while virtual time stood still: it spins, waiting for time that never passes. */
export class ClockSpinError extends Error {
  constructor(readonly scope: ClockScope, readonly reads: number, readonly timeMs: number) {
    super(`busy-waits on the clock: read it ${reads.toLocaleString('en-US')} times while virtual time stood still at t=${Math.round(timeMs)} ms (on the kernel's clock, time passes only while the code waits: await a timer or sim.sleep)`);
    this.name = 'ClockSpinError';
  }
}

/** A timer callback threw: a real process would die of the uncaught exception. */
export class TimerCallbackError extends Error {
  constructor(readonly scope: ClockScope, readonly error: unknown) {
    super(`a timer callback threw ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
    this.name = 'TimerCallbackError';
  }
}

/** Clock reads in one synchronous stretch at one virtual instant before {@link ClockSpinError}. */
const SPIN_READS_MAX = 1_000_000;
/** Node's own bounds on a timer delay (outside them Node uses 1 ms). */
const TIMEOUT_MAX = 2 ** 31 - 1;
/**
 * How many one-shot timers, each armed by the code the one before it
 * resumed, still fire once every task of the run has ended: finite
 * background work a handler fired and forgot (`void render(job)` that
 * awaits a queue slot, then the rendering, then writes) finishes, as it
 * would in the process — until 2026-12 its second timer stopped with the
 * run and a correct 202 service failed `exactly-one` — while a loop that
 * never ends (an async heartbeat, a poller) stops after this many turns
 * rather than running to the kernel's limits. Intervals keep their own
 * rule (one tick after the end).
 */
export const LATE_CHAIN_MAX = 128;

interface VirtualTimer {
  id: number;
  callAt: number;
  /** Bumps on refresh/re-arm, so a stale kernel event is ignored. */
  gen: number;
  cb: (...args: unknown[]) => void;
  args: unknown[];
  repeatMs: number | undefined;
  /** Whose scope it fires in; a firing's (src/sim/timer-firing.ts) when its async callback's first stretch armed it. */
  owner: ClockScope;
  /** Armed when every task of the run had ended (by a timer's callback), or unref'd by Node (AbortSignal.timeout's): it will not keep the run going. */
  late: boolean;
  /**
   * 0: armed while the run was live. n > 0: the n-th link of a chain of
   * timers armed after the run's end, each by the code the one before it
   * resumed (`await sleep(20); …; await sleep(30); write()`). Infinity:
   * unref'd. See {@link LATE_CHAIN_MAX}.
   */
  depth: number;
  /** The trace line its firing writes, when it is not a `setTimeout`/`setInterval` of the code's own. */
  note?: string;
  /** An interval that had its one tick after the run's end (see `due`). */
  ticked?: boolean;
}

/** What `setTimeout` returns on the kernel's clock: Node's Timeout shape (ref/unref/refresh, a number when coerced). */
class VirtualTimeout {
  /**
   * What `hasRef()` answers. Only that: a simulated process is a server that
   * lives on, so an unref'd timer (a cache sweep's interval) still fires on
   * virtual time, as it does in a Node server; until 2026-12 `hasRef()` said
   * true after `unref()`, and a `memory()` that checked it threw.
   */
  private refed = true;
  constructor(readonly id: number, private readonly clock: KernelClock) {}
  ref(): this {
    this.refed = true;
    return this;
  }
  unref(): this {
    this.refed = false;
    return this;
  }
  hasRef(): boolean {
    return this.refed;
  }
  refresh(): this {
    this.clock.latest().refresh(this.id);
    return this;
  }
  close(): this {
    this.clock.latest().clear(this.id);
    return this;
  }
  [Symbol.toPrimitive](): number {
    return this.id;
  }
}

export { uuidFrom };

/** One global this module replaces: how to read and write it. */
interface Slot {
  obj: () => object;
  key: string;
  fake: unknown;
}

/** A replaced global and how to put it back. */
interface Saved {
  obj: object;
  key: string;
  own: PropertyDescriptor | undefined;
}

function put(obj: object, key: string, value: unknown): Saved {
  const own = Object.getOwnPropertyDescriptor(obj, key);
  Object.defineProperty(obj, key, { value, configurable: true, writable: true, enumerable: own?.enumerable ?? false });
  return { obj, key, own };
}

function restore(saved: Saved[]): void {
  for (const s of saved.reverse()) {
    if (s.own === undefined) delete (s.obj as Record<string, unknown>)[s.key];
    else Object.defineProperty(s.obj, s.key, s.own);
  }
}

/** The scope whose code runs now; undefined: host code (real globals). */
let current: KernelClock | undefined;
let currentScope: ClockScope | undefined;
/**
 * A busy request's timer just fired (see {@link ClockScope.busy}): until a
 * scope is next entered or left, the dispatchers answer for it. What the
 * firing resolved runs first in the next task's turn, before that task
 * enters its own scope — work the handler fired and forgot (`void
 * audit()`: a sleep, then `Date.now()`), which until 2026-12 read the
 * machine's clock and randomness there, so two runs of one file wrote
 * different rows.
 */
let lingering: ClockScope | undefined;
/** The clock whose dispatchers are installed (one simulated run at a time per process). */
let installed: KernelClock | undefined;

/**
 * The kernel's clock for one run: installs dispatching globals (Date,
 * performance.now, setTimeout/setInterval/setImmediate and their clear
 * functions, AbortSignal.timeout, Math.random, crypto.randomUUID,
 * crypto.getRandomValues, crypto.subtle's deterministic calls) that
 * act virtually only while a {@link ClockScope} is entered, and owns the
 * timers armed inside scopes. A timer is kernel-scheduled work: its
 * callback runs when the kernel's time reaches it — in its owner's kernel
 * task when the owner is idle awaiting it (so `await new Promise(r =>
 * setTimeout(r, 100))` waits 100 ms of virtual time and interleaves under
 * the scheduler like `sim.sleep`), else as a kernel event with the owner's
 * scope entered (a fire-and-forget timer). Install once per run
 * ({@link installKernelClock}), {@link KernelClock.release} in a `finally`.
 *
 * @example
 * const clock = installKernelClock(kernel);
 * try {
 *   const scope = { name: 'app', offsetMs: 0, rng: kernel.fork('app'), park: (ms) => kernel.sleep(ms) };
 *   kernel.spawn('app', async () => {
 *     clock.enter(scope); // Date.now() is now kernel time
 *     try { await app(); } finally { clock.leave(); }
 *   });
 *   await clock.watch(kernel.run());
 * } finally {
 *   clock.release();
 * }
 */
export class KernelClock {
  private readonly timers = new Map<number, VirtualTimer>();
  private nextId = 1;
  private seq = 0;
  private readonly event: number;
  private saved: Saved[] = [];
  /** Globals re-asserted over someone else's fakes while a scope runs (the client bridge installs its own). */
  private overlay: Saved[] | undefined;
  private slots: Slot[] = [];
  private reads = 0;
  private readsAt = Number.NaN;
  private failure: Error | undefined;
  private onFailure: ((e: Error) => void) | undefined;
  /** Scopes parked by the clock, awaiting their own timers. */
  private readonly idle = new Set<ClockScope>();
  /**
   * Timers the run's end stopped (intervals, and timers armed by a callback
   * after it): the processes that armed them live on, so the next phase on
   * the same instances (the recovery phase) resumes them ({@link carryTo}).
   */
  private readonly stoppedWithRun: VirtualTimer[] = [];
  /** The clock this one's timers were carried to: handles from this run (`refresh`, `close`) act there. */
  private successor: KernelClock | undefined;

  /** The process's watchdog against code that never returns the thread (when armed; see watchdog.ts). */
  private readonly dog: Watchdog | undefined = watchdog();

  constructor(
    readonly kernel: Kernel,
    /**
     * The wall-clock instant of kernel time 0, in ms since 1970 (the
     * scenario's `service.epochMs`; 0 for files found before it): `Date`
     * and SQLite's `'now'` read it, `performance.now` and `process.hrtime`
     * do not (they are relative, as on a real machine).
     */
    readonly epochMs = 0,
  ) {
    this.event = kernel.on((id, gen) => this.due(id, gen));
  }

  /** Virtual wall-clock ms of the entered scope (Date.now). */
  wallNow(s: ClockScope): number {
    this.countRead(s);
    // The epoch added after the floor: added before, a fraction of kernel time (latencies are fractional) would round at 2^-12 ms near 2026 and could floor one ms later.
    return Math.floor(this.kernel.now + s.offsetMs) + this.epochMs;
  }

  /** @internal counts clock reads at one virtual instant; a spin throws. */
  countRead(s: ClockScope): void {
    const t = this.kernel.now;
    if (t !== this.readsAt) {
      this.readsAt = t;
      this.reads = 0;
    }
    if (++this.reads > SPIN_READS_MAX) {
      const e = new ClockSpinError(s, this.reads, t);
      this.failure ??= e; // even if the code catches it, the run stops with it
      throw e;
    }
  }

  /** Counts {@link enter}s: a {@link leaveAfterTurn} queued before the scope was entered again is stale. */
  private entries = 0;

  /** Runs `scope`'s code from now on (call when its task resumes). */
  enter(scope: ClockScope): void {
    current = this;
    currentScope = scope;
    this.entries++;
    lingering = undefined;
    this.reads = 0;
    this.dog?.enter(`${scope.name}${scope.where === undefined ? '' : ` (${scope.where()})`}`);
    // Someone installed their own fakes over ours (the client bridge does, for
    // the client's code): while the service's code runs, ours are on top.
    // One read per step: whoever installs fakes replaces Date with the rest.
    if (this.overlay === undefined && globalThis.Date !== this.slots[0]?.fake && this.slots.length > 0) {
      this.overlay = this.slots.map((s) => put(s.obj(), s.key, s.fake));
    }
  }

  /** Whether a process's start-up code runs now ({@link starting}). */
  private starting = false;

  /**
   * Runs a simulated process's start-up code (a service's `memory()`): the
   * timers it arms are the process's own, kept going after the run's last
   * request as a request's are (see {@link arm}), whenever it starts.
   */
  startProcess<T>(fn: () => T): T {
    const was = this.starting;
    this.starting = true;
    try {
      return fn();
    } finally {
      this.starting = was;
    }
  }

  /**
   * Back to host code once the code running now has returned the thread: the
   * scope's task is about to wait (a `sim.step`), but the call that reached
   * the wait may have been a helper the handler did not await yet —
   * `Promise.race([charge(), timeout(2000)])` where `charge()` steps at once
   * — and the handler's code after that call runs on in this same turn. It
   * is the request's code: its `setTimeout`, `Date.now()` and `Math.random()`
   * are the run's. Until 2026-12 they were the machine's: the timeout armed
   * there was a real timer, so the race's 503 never came in a run (a service
   * whose slow charge commits after the timeout's answer held), or the run
   * stopped as "awaited something outside the simulation". The scope is left
   * in a microtask queued now, so before the kernel, whose turn is queued
   * when the task parks, runs anything else.
   */
  leaveAfterTurn(): void {
    if (current !== this || currentScope === undefined) return;
    const scope = currentScope;
    const entries = this.entries;
    realQueueMicrotask(() => {
      if (current === this && currentScope === scope && this.entries === entries) this.leave();
    });
  }

  /** Back to host code (call before the scope's task waits). */
  leave(): void {
    current = undefined;
    currentScope = undefined;
    lingering = undefined;
    this.dog?.leave();
    if (this.overlay !== undefined) {
      restore(this.overlay);
      this.overlay = undefined;
    }
  }

  /**
   * @internal `unrefNote`: a timer Node keeps unref'd (AbortSignal.timeout's),
   * with the trace line its firing writes. Like a late timer, it does not
   * keep the run going: a signal nobody waits on any more, once every task
   * has ended, stops with the run rather than firing.
   */
  arm(owner: ClockScope, cb: unknown, ms: unknown, args: unknown[], repeat: boolean, unrefNote?: string): VirtualTimeout {
    if (typeof cb !== 'function') throw new TypeError(`The "callback" argument must be of type function. Received ${typeof cb}`);
    let delay = Number(ms);
    if (!(delay >= 1 && delay <= TIMEOUT_MAX)) delay = 1; // what Node does
    // Past the run's end, a link further down the chain of the firing whose code runs now — unless the
    // callback re-arms itself (`const beat = () => { …; setTimeout(beat, 100) }`): that loop never ends, so it stops with the run.
    // A process starting (its memory(), at boot or at a restart after the run's last request) arms its own
    // timers: as one a request arms, an interval ticks once more after the run (an outbox relay started in
    // memory() ships the last order; until 2026-12 it stopped with the run, and a correct relay's last
    // order, or every order a restart left to it, had no shipment). Anything else before the run's first
    // step stops with the run, as it always did.
    const depth = unrefNote !== undefined ? Infinity : this.kernel.hasLiveTasks() || this.starting ? 0 : this.kernel.steps === 0 || cb === this.firingCb ? Infinity : 1 + (owner instanceof FiringScope ? owner.depth : this.firingDepth);
    const t: VirtualTimer = { id: this.nextId++, callAt: this.kernel.now + delay, gen: 0, cb: cb as VirtualTimer['cb'], args, repeatMs: repeat ? delay : undefined, owner, late: depth > 0, depth, note: unrefNote };
    this.timers.set(t.id, t);
    this.seq++;
    this.kernel.at(t.callAt, this.event, t.id, t.gen);
    return new VirtualTimeout(t.id, this);
  }

  /** @internal setImmediate: due now, after what is already due. */
  armNow(owner: ClockScope, cb: unknown, args: unknown[]): VirtualTimeout {
    const v = this.arm(owner, cb, 1, args, false);
    const t = this.timers.get(v.id)!;
    t.callAt = this.kernel.now;
    t.gen++;
    this.kernel.at(t.callAt, this.event, t.id, t.gen);
    return v;
  }

  /** @internal */
  clear(id: number): void {
    this.timers.delete(id);
  }

  /**
   * Whether a one-shot timer whose owner matches is pending and will fire
   * while the run is live: code of that process may yet settle what another
   * scope awaits (a limiter's timer, armed by the request before, starts the
   * next job). Intervals do not count: one that ticks for ever would hold a
   * wait on real I/O until the run's time limit.
   */
  hasPendingOneShot(of: (owner: ClockScope) => boolean): boolean {
    for (const t of this.timers.values()) if (t.repeatMs === undefined && !t.late && of(rootScope(t.owner))) return true;
    return false;
  }

  /** Drops every timer whose owner matches (a killed process's timers never fire). */
  dropTimers(of: (owner: ClockScope) => boolean): void {
    for (const [id, t] of this.timers) if (of(rootScope(t.owner))) this.timers.delete(id);
    for (let i = this.stoppedWithRun.length - 1; i >= 0; i--) if (of(rootScope(this.stoppedWithRun[i]!.owner))) this.stoppedWithRun.splice(i, 1);
    // What an async callback of theirs still had to do dies with them.
    for (const f of this.firings) {
      if (!of(f.owner)) continue;
      this.firings.delete(f);
      this.idle.delete(f);
      if (f.task !== undefined && f.task.state !== 'running') this.kernel.kill(f.task);
      f.task = undefined;
      f.settled = true; // nothing of it runs again
    }
  }

  /**
   * Resumes on `next` (the following phase's clock, same processes) the
   * timers this run's end stopped, each due when it was stopped, with its
   * id: a sweeper `setInterval` a request started goes on sweeping in the
   * recovery phase as it would in the process, and the handle the service
   * kept still clears it. Without this, a correct service whose stale claims
   * only an interval frees was reported as making no progress.
   */
  carryTo(next: KernelClock): void {
    next.nextId = Math.max(next.nextId, this.nextId);
    this.successor = next;
    for (const t of this.stoppedWithRun) {
      // A firing's code resumes on the phase's clock (src/sim/timer-firing.ts).
      if (t.owner instanceof FiringScope) t.owner.clock = next;
      // Not "late" there: the phase's tasks are live, so it fires like any timer.
      const r: VirtualTimer = { ...t, gen: 0, late: false, depth: 0, ticked: false };
      next.timers.set(r.id, r);
      next.kernel.at(r.callAt, next.event, r.id, r.gen);
    }
    this.stoppedWithRun.length = 0;
  }

  /**
   * How many times the timers {@link carryTo} would resume fire up to
   * `untilMs` if nothing clears them: the next phase's event budget grows by
   * it, since a sweeper of 100 ms waiting out a clock skew of hours is a
   * long, legitimate run, not a runaway.
   */
  carriedFirings(untilMs: number): number {
    let n = 0;
    for (const t of this.stoppedWithRun) n += t.repeatMs === undefined ? 1 : Math.max(0, Math.ceil((untilMs - t.callAt) / t.repeatMs)) + 1;
    return n;
  }

  /** @internal The clock a handle from this run acts on now (its timers may have been carried on). */
  latest(): KernelClock {
    let c: KernelClock = this;
    while (c.successor !== undefined) c = c.successor;
    return c;
  }

  /** @internal */
  has(id: number): boolean {
    return this.timers.has(id);
  }

  /** @internal Timeout.refresh(): the same delay again, from now. */
  refresh(id: number): void {
    const t = this.timers.get(id);
    if (t === undefined) return;
    t.gen++;
    t.callAt = this.kernel.now + (t.repeatMs ?? 1);
    this.kernel.at(t.callAt, this.event, t.id, t.gen);
  }

  private due(id: number, gen: number): void {
    const t = this.timers.get(id);
    if (t === undefined || t.gen !== gen) return; // cleared or re-armed
    // An owner parked awaiting its timers fires them itself, in its own task.
    if (this.idle.has(t.owner)) return;
    // Once every task of the run has ended, the run is over: a timer left
    // behind that would go on for ever (a lease-renewal setInterval nobody
    // cleared, or a setTimeout its own callback re-arms) is not a reason to
    // run virtual time on to the kernel's limit, so it dies. A one-shot timer
    // armed while the run was live still fires (work a handler deferred
    // past its answer is part of the run's effects), and so does one armed
    // after the end by the code an earlier one resumed, up to LATE_CHAIN_MAX
    // links (background work that awaits twice). What dies here is kept
    // for the recovery phase, which resumes it (carryTo).
    // An interval armed while the run was live ticks once more, though: the
    // work it does is the process's, as a one-shot timer's is — an outbox
    // relay publishing what the last request committed. Until 2026-12 it
    // stopped before that tick, and a correct relay's order had no shipment.
    const ended = !this.kernel.hasLiveTasks();
    if (ended && (this.stopsWithRun(t) || (t.repeatMs !== undefined && t.ticked === true))) {
      this.timers.delete(t.id);
      this.stoppedWithRun.push(t);
      // Said on the trace (shown, not hashed), once: work cut off here may be why an effect is missing (a background job of 200 awaits).
      if (!this.chainCutNoted && t.repeatMs === undefined && Number.isFinite(t.depth) && t.depth > LATE_CHAIN_MAX) {
        this.chainCutNoted = true;
        this.kernel.note(t.owner.name, `timer chain stopped with the run after ${LATE_CHAIN_MAX} timers armed since the run's last task ended (a loop cannot be told from finite work; the rest of it did not run)`);
      }
      return;
    }
    // A stalled process (a GC pause) runs no timer: a lease-renewal
    // heartbeat does not beat while its holder is frozen, which is how the
    // lease expires under it. The timer fires once the stall is over.
    const until = t.owner.frozenUntil?.();
    if (until !== undefined && until > this.kernel.now) {
      t.gen++;
      t.callAt = until;
      this.kernel.at(until, this.event, t.id, t.gen);
      return;
    }
    // A line of its own (shown, not hashed: traces and files stay as they
    // were), so what the callback writes is not shown as the work of the
    // step logged before it (the stepper reads the database per entry).
    this.kernel.note(t.owner.name, t.note ?? (t.repeatMs === undefined ? 'setTimeout callback' : 'setInterval callback'));
    let out: unknown;
    const mark = this.nextId;
    // A busy request's firing earlier at this turn still lingers once this one is done (its code has not run yet).
    const l = lingering;
    this.enter(t.owner);
    this.firingDepth = t.depth;
    this.firingCb = t.cb;
    try {
      out = this.fire(t, !ended);
    } finally {
      this.firingDepth = 0;
      this.firingCb = undefined;
      this.leave();
      lingering = l;
    }
    // Its last tick: stopped with the run (not re-armed: a long period must not carry the run on), kept for the recovery phase, due a period on.
    if (ended && t.repeatMs !== undefined && this.timers.get(t.id) === t) {
      t.ticked = true;
      t.gen++;
      t.callAt = this.kernel.now + t.repeatMs;
      this.timers.delete(t.id);
      this.stoppedWithRun.push(t);
    }
    // An async callback: what follows its first await is queued in
    // microtasks that run after this event, outside every scope (until
    // 2026-12 it read the machine's clock and randomness). It runs on as a
    // task of its own, in its owner's scope, before anything else runs.
    if (isThenable(out)) this.runOn(t, out, mark);
    // A timer of a firing whose task let go (the sleep it awaited had stopped with the run, and the recovery phase resumed it): it resumes the firing.
    else if (t.owner instanceof FiringScope) {
      if (t.owner.task === undefined && !t.owner.settled) this.resume(t.owner);
    }
    // A plain callback may have resolved a promise some code awaits — the
    // resolver of `await setTimeout(200)` from node:timers/promises or of
    // `new Promise((r) => setTimeout(r, 200))` in work a handler fired and
    // forgot (`void notify(id)`): that code runs on in microtasks after this
    // event. It runs now, in the owner's scope, before anything else: until
    // 2026-12 it ran during the next task's step, outside every scope (its
    // Date.now() overflowed the stack, the rejection was dropped, and a 202
    // service's deferred write was never made).
    else if (t.owner.busy?.() !== true) this.kernel.afterEvent(() => this.drain(t.owner, t.depth));
    // The handler still runs (blocked in a step or sleep): what the firing resolved may be the handler itself (a gateway call
    // raced against a timeout), which answers in its request's task, so it is not drained here; it runs in the owner's scope.
    else lingering = t.owner;
  }

  /** The chain depth of the firing whose code runs now (a callback, or the microtasks it queued): what it arms after the run's end is one link further. */
  private firingDepth = 0;
  /** Whether the trace already says a chain was cut at {@link LATE_CHAIN_MAX}. */
  private chainCutNoted = false;
  /** The callback running now, if a timer's: one that arms itself again is a loop, not a chain. */
  private firingCb: VirtualTimer['cb'] | undefined;

  /** Whether a timer armed after the run's end stops with the run (kept for the next phase) instead of firing: unref'd, an interval, or past the chain's bound or the kernel's time limit. */
  private stopsWithRun(t: VirtualTimer): boolean {
    return t.late && (t.repeatMs !== undefined || t.depth > LATE_CHAIN_MAX || t.callAt > this.kernel.timeMsMax);
  }

  /** Lets the microtasks a timer's firing queued run in `owner`'s scope (one host turn); what they leave unhandled is an uncaught error of its process. */
  private async drain(owner: ClockScope, depth: number): Promise<void> {
    const l = lingering;
    this.enter(owner);
    this.firingDepth = depth;
    try {
      await hostTurn();
    } finally {
      this.firingDepth = 0;
      if (current === this && currentScope === owner) this.leave();
      lingering = l;
    }
    const r = this.rejections ? takeRejection() : undefined;
    if (r !== undefined) this.thrown(owner, r.reason, 'unhandled rejection');
  }

  /** Runs the callback; answers what it returned (a promise from an async one). `rearm` false: an interval's last tick after the run. */
  private fire(t: VirtualTimer, rearm = true): unknown {
    if (t.repeatMs !== undefined) {
      if (!rearm) return this.call(t);
      t.gen++;
      t.callAt = this.kernel.now + t.repeatMs;
      this.kernel.at(t.callAt, this.event, t.id, t.gen);
    } else this.timers.delete(t.id);
    return this.call(t);
  }

  private call(t: VirtualTimer): unknown {
    try {
      return t.cb(...t.args);
    } catch (e) {
      this.thrown(t.owner, e);
      return undefined;
    }
  }

  /**
   * Stops the run with `e`, as a spin or a throwing timer callback does: for
   * a fault found in code that has no caller to throw to (a timer callback,
   * a promise nobody awaits), so the user's code cannot swallow it.
   */
  abort(e: Error): void {
    this.fail(e);
  }

  /** A callback of `owner` threw (or its promise rejected): an uncaught error of its process. */
  private thrown(owner: ClockScope, e: unknown, kind?: UncaughtKind): void {
    if (e instanceof ClockSpinError) return this.fail(e);
    // A user's service whose metrics flush throws from a setTimeout: its process crashes, as Node's does (until 2026-12 the run stopped with "internal error … a bug in retrysim").
    if (owner.uncaught?.(e, kind) === true) return;
    this.fail(new TimerCallbackError(owner, e));
  }

  /** Async firings whose tasks may still run: a kill of their process ends them ({@link dropTimers}). */
  private readonly firings = new Set<FiringScope>();

  /** The continuation of `t`'s async callback, `p`, as a task of its own (see src/sim/timer-firing.ts). */
  private runOn(t: VirtualTimer, p: PromiseLike<unknown>, mark: number): void {
    const f = new FiringScope(rootScope(t.owner), this, p);
    f.depth = t.depth;
    // What its synchronous part armed (ids from `mark`: the sleep it awaits) is the firing's, for its task to wait on.
    for (const x of this.timers.values()) if (x.id >= mark && x.owner === t.owner) x.owner = f;
    this.resume(f, t.repeatMs === undefined ? 'setTimeout' : 'setInterval');
  }

  /** Runs firing `f`'s code in a task of its own, spawned `first`. */
  private resume(f: FiringScope, kind = 'timer'): void {
    this.firings.add(f);
    // A daemon: like the timer it came from, it does not keep the run going (an async interval would otherwise never stop).
    const task: Task<void> = this.kernel.spawn(`${f.name} ${kind} callback`, () => f.run((e) => this.thrown(f, e, 'unhandled rejection')).finally(() => {
      if (f.task !== task) return;
      f.task = undefined;
      this.firings.delete(f);
    }), { first: true, daemon: true });
    f.task = task;
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.onFailure?.(this.failure);
  }

  /** The error that stopped the run (a spin, a timer callback that threw), even if user code caught it. */
  get stopped(): Error | undefined {
    return this.failure;
  }

  /**
   * The entered scope's code is idle (it awaits neither the kernel nor
   * anything it can see): when it has timers of its own, park its task until
   * the earliest and fire the due ones. False: it has none (it awaits
   * something outside the simulation).
   */
  private wakeAtNextTimer(s: ClockScope): boolean {
    // A firing's timer armed after the run ended stops with the run past its chain's bound, as a re-armed setTimeout does (an async heartbeat loop would run to the kernel's limit).
    const ending = s instanceof FiringScope && !this.kernel.hasLiveTasks();
    let next: number | undefined;
    for (const t of this.timers.values()) if (t.owner === s && !(ending && this.stopsWithRun(t)) && (next === undefined || t.callAt < next)) next = t.callAt;
    if (next === undefined) return false;
    this.idle.add(s);
    s.park(Math.max(0, next - this.kernel.now)).then(() => {
      this.idle.delete(s);
      const now = this.kernel.now + 1e-9; // (callAt - now) + now may round a hair below callAt
      const due = [...this.timers.values()].filter((t) => t.owner === s && t.callAt <= now).sort((a, b) => a.callAt - b.callAt || a.id - b.id);
      for (const t of due) {
        if (this.timers.get(t.id) !== t) continue;
        // The firing's code runs on from this timer: what it arms after the end is a link further down its chain.
        if (s instanceof FiringScope) s.depth = t.depth;
        this.fire(t);
      }
    }, (e) => this.fail(e instanceof Error ? e : new Error(String(e))));
    return true;
  }

  /**
   * Runs `run` (the kernel's run) while watching for idle scopes: a run only
   * ever waits on the kernel, so it completes within microtasks; when a
   * macrotask gets to run first, the entered scope's code is awaiting
   * something else. Its own timers: park it until the earliest (above).
   * Nothing it set: reject with `stuck(scope)` — unless no scope is entered
   * and `foreignOk` (the client bridge settles its code on macrotasks).
   */
  watch<T>(run: Promise<T>, stuck: (scope: ClockScope | undefined) => Error, foreignOk = false): Promise<T> {
    let timer: NodeJS.Immediate | undefined;
    const failed = new Promise<never>((_, reject) => {
      this.onFailure = reject;
      if (this.failure !== undefined) reject(this.failure);
      const probe = () => {
        // A hosted app's request is letting one turn pass (src/sim/host-turns.ts): not foreign; look again after it.
        if (hostTurnPending()) return arm();
        const s = current === this ? currentScope : undefined;
        if (s !== undefined && this.wakeAtNextTimer(s)) return arm();
        if (s?.parkOnOthers?.() === true) return arm();
        if (s === undefined && foreignOk) return arm();
        reject(stuck(s));
      };
      const arm = () => {
        timer = realSetImmediate(probe); // real-time: allowed (orders host work after the run's microtasks; reads no time)
      };
      arm();
    });
    const raced = Promise.race([run, failed]).finally(() => realClearImmediate(timer));
    if (!this.rejections) return raced;
    // Node reports what the run's last microtasks left unhandled before the
    // next host turn: let it pass while the run still collects them, and drop
    // them (no request of this run is left to crash; the next run must not
    // take them for its own).
    const settle = async (): Promise<void> => {
      await hostTurn();
      dropRejections();
    };
    // A run that threw too: a search that goes on after an erroring case must not inherit its rejections.
    return raced.then(
      async (v) => (await settle(), v),
      async (e: unknown) => {
        await settle();
        throw e;
      },
    );
  }

  /** Whether this run collects the simulated code's unhandled rejections (see src/sim/rejections.ts). */
  private rejections = false;

  /** Collects the unhandled rejections of simulated code until {@link release} (services and hosted apps; see src/sim/rejections.ts). */
  collectRejections(): void {
    if (this.rejections) return;
    this.rejections = true;
    armRejections();
  }

  /** Uninstalls the globals and drops every timer (idempotent; call in a `finally`). */
  release(): void {
    if (current === this) this.leave();
    lingering = undefined;
    if (installed === this) {
      for (const x of this.saved.reverse()) (x.obj as Record<string, unknown>)[x.key] = x.own!.value;
      this.saved = [];
      installed = undefined;
    }
    this.timers.clear();
    this.onFailure = undefined;
    if (this.rejections) {
      this.rejections = false;
      disarmRejections();
    }
  }

  /** @internal */
  install(): void {
    if (installed !== undefined) throw new Error('installKernelClock: another run\'s kernel clock is installed (the globals are process-wide; one simulated run at a time)');
    installed = this;
    this.slots = dispatchSlots();
    // Plain assignments, not defineProperty: redefining globals costs tens
    // of µs per run (and deoptimises code that reads them); assigning back
    // the value read here restores exactly what was there.
    this.saved = this.slots.map((s) => {
      const obj = s.obj() as Record<string, unknown>;
      const old = obj[s.key];
      prev[s.key] = old;
      obj[s.key] = s.fake;
      return { obj, key: s.key, own: { value: old } };
    });
  }
}

/** What the dispatchers delegate to outside every scope: the globals found at install (real ones, or the bridge's). */
const prev: Record<string, unknown> = {};

/** The entered scope of the installed clock, if any. */
function scopeNow(): ClockScope | undefined {
  if (installed === undefined) return undefined;
  return current === installed ? currentScope : lingering;
}

// performance.timeOrigin is a getter of Performance.prototype, which a per-run
// assignment cannot replace: a dispatching getter on the object, once per
// process. In a scope the process "started" at the run's epoch on its own
// skewed clock, so `timeOrigin + performance.now()` is its `Date.now()`
// (OpenTelemetry's timestamps are made so); until 2026-12 it was the
// machine's start, a real instant in a simulated trace.
{
  const proto = Object.getPrototypeOf(performance) as object;
  const real = Object.getOwnPropertyDescriptor(proto, 'timeOrigin')?.get;
  if (real !== undefined && Object.getOwnPropertyDescriptor(performance, 'timeOrigin') === undefined) {
    Object.defineProperty(performance, 'timeOrigin', {
      configurable: true,
      enumerable: true,
      get(this: unknown) {
        const s = scopeNow();
        return s === undefined ? real.call(performance) : installed!.epochMs + s.offsetMs;
      },
    });
  }
}

/** The last clock installed: after a run (when the checkers read the effects) its kernel's time, on its epoch, is "now" for SQL. */
let lastClock: KernelClock | undefined;

/**
 * Simulated wall-clock ms for code that reads time outside the globals —
 * SQLite's `'now'` (src/service/sql-clock.ts): the entered scope's
 * `Date.now()` while a request runs, else the installed (or last) run's
 * kernel time; undefined when no simulated run ever happened in this process.
 */
export function simulatedWallNow(): number | undefined {
  const s = scopeNow();
  if (s !== undefined) return installed!.wallNow(s);
  const c = installed ?? lastClock;
  return c === undefined ? undefined : c.kernel.now + c.epochMs;
}

/** The entered scope's stream, for node:crypto's dispatchers (src/sim/seeded-node-crypto.ts). */
const scopeStream = (): Prng | undefined => scopeNow()?.rng;

// process.pid, process.ppid and os.hostname() follow the entered scope's
// process. Registered once at import: the dispatchers are process-wide and
// ask at each read (src/sim/process-identity.ts).
identifyProcessesBy(() => scopeNow()?.identity);

/** Whether a scope's code runs now: thread-pool calls are then answered at once (sync-subtle.ts, sync-thread-pool.ts). */
const inScope = (): boolean => scopeNow() !== undefined;

let slotsOnce: Slot[] | undefined;

/** The dispatching globals, made once per process: they read the installed clock and its entered scope at each call. */
function dispatchSlots(): Slot[] {
  if (slotsOnce !== undefined) return slotsOnce;
  const call = (name: string, ...a: unknown[]) => (prev[name] as (...x: unknown[]) => unknown)(...a);
  const PrevDate = () => prev.Date as DateConstructor;
  function VDate(this: unknown, ...args: unknown[]): unknown {
    const s = scopeNow();
    const D = PrevDate();
    if (new.target === undefined) return s === undefined ? D() : new D(installed!.wallNow(s)).toString();
    if (args.length === 0 && s !== undefined) return Reflect.construct(D, [installed!.wallNow(s)], new.target);
    return Reflect.construct(D, args, new.target);
  }
  Object.setPrototypeOf(VDate, Date); // Date.parse, Date.UTC
  VDate.prototype = Date.prototype;
  (VDate as unknown as { now: () => number }).now = () => {
    const s = scopeNow();
    if (s !== undefined) return installed!.wallNow(s);
    // The machine's Date.now is load-clock.ts's dispatcher, which asks the global Date — this one: until 2026-12 they called each other until the stack overflowed.
    const D = PrevDate();
    return D === MachineDate ? machineDateNowMs() : D.now();
  };
  const timerId = (x: unknown): number | undefined => (x instanceof VirtualTimeout ? x.id : typeof x === 'number' && installed?.has(x) ? x : undefined);
  const clearer = (name: string) => (x: unknown) => {
    const id = timerId(x);
    if (id !== undefined) installed!.clear(id);
    else call(name, x);
  };
  const fakes: Record<string, unknown> = {
    setTimeout: (cb: unknown, ms?: unknown, ...args: unknown[]) => {
      const s = scopeNow();
      return s === undefined ? call('setTimeout', cb, ms, ...args) : installed!.arm(s, cb, ms, args, false);
    },
    setInterval: (cb: unknown, ms?: unknown, ...args: unknown[]) => {
      const s = scopeNow();
      return s === undefined ? call('setInterval', cb, ms, ...args) : installed!.arm(s, cb, ms, args, true);
    },
    setImmediate: (cb: unknown, ...args: unknown[]) => {
      const s = scopeNow();
      return s === undefined ? call('setImmediate', cb, ...args) : installed!.armNow(s, cb, args);
    },
    clearTimeout: clearer('clearTimeout'),
    clearInterval: clearer('clearInterval'),
    clearImmediate: clearer('clearImmediate'),
  };
  const random = () => {
    const s = scopeNow();
    return s === undefined ? (prev.random as () => number)() : s.rng.next();
  };
  const perfNow = function (this: unknown) {
    const s = scopeNow();
    if (s === undefined) return (prev.now as () => number).call(performance);
    installed!.countRead(s);
    return installed!.kernel.now; // monotonic: the kernel's time, without the wall clock's skew
  };
  // process.hrtime (and .bigint): monotonic like performance.now, in ns; a timing library's reads stay on virtual time.
  const realHrtime = process.hrtime;
  const hrtime = function (prev?: [number, number]): [number, number] {
    const s = scopeNow();
    if (s === undefined) return prev === undefined ? realHrtime() : realHrtime(prev); // real-time: allowed (host code: the real one)
    installed!.countRead(s);
    const ns = Math.round(installed!.kernel.now * 1e6);
    let sec = Math.floor(ns / 1e9);
    let nsec = ns - sec * 1e9;
    if (prev !== undefined) {
      sec -= prev[0];
      nsec -= prev[1];
      if (nsec < 0) {
        sec--;
        nsec += 1e9;
      }
    }
    return [sec, nsec];
  };
  hrtime.bigint = () => {
    const s = scopeNow();
    if (s === undefined) return realHrtime.bigint(); // real-time: allowed (host code: the real one)
    installed!.countRead(s);
    return BigInt(Math.round(installed!.kernel.now * 1e6));
  };
  // process.uptime(): seconds since the simulated process started (the run's start, or its last restart), as a health check or a lease reads it.
  const uptime = function (): number {
    const s = scopeNow();
    if (s === undefined) return (prev.uptime as () => number).call(process);
    installed!.countRead(s);
    return Math.max(0, installed!.kernel.now - (s.identity?.startedAtMs ?? 0)) / 1000;
  };
  // AbortSignal.timeout arms a timer inside Node, which the globals above do not reach.
  const timeout = function (ms: unknown): AbortSignal {
    const s = scopeNow();
    const real = prev.timeout as (ms: unknown) => AbortSignal;
    return s === undefined ? real.call(AbortSignal, ms) : timeoutSignal(ms, (fire, ms) => installed!.arm(s, fire, ms, [], false, 'AbortSignal.timeout fires'), real);
  };
  const randomUUID = () => {
    const s = scopeNow();
    return s === undefined ? (prev.randomUUID as () => string).call(crypto) : uuidFrom(s.rng);
  };
  const getRandomValues = <T extends ArrayBufferView | null>(a: T): T => {
    const s = scopeNow();
    if (s === undefined || a === null || !ArrayBuffer.isView(a) || a instanceof Float32Array || a instanceof Float64Array || a instanceof DataView) return (prev.getRandomValues as (x: T) => T).call(crypto, a);
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = s.rng.nextU32() & 0xff;
    return a;
  };
  slotsOnce = [
    { obj: () => globalThis, key: 'Date', fake: VDate },
    ...Object.entries(fakes).map(([key, fake]) => ({ obj: () => globalThis, key, fake })),
    { obj: () => Math, key: 'random', fake: random },
    { obj: () => performance, key: 'now', fake: perfNow },
    { obj: () => process, key: 'hrtime', fake: hrtime },
    { obj: () => process, key: 'uptime', fake: uptime },
    { obj: () => AbortSignal, key: 'timeout', fake: timeout },
    ...PROMPT_SUBTLE.map((key) => ({ obj: () => crypto.subtle, key, fake: promptSubtle(key, inScope, () => prev[key]) })),
    { obj: () => crypto, key: 'randomUUID', fake: randomUUID },
    { obj: () => crypto, key: 'getRandomValues', fake: getRandomValues },
  ];
  return slotsOnce;
}

const realClearImmediate = globalThis.clearImmediate; // real-time: allowed (host work, reads no time)

/**
 * Installs the kernel's clock for one run (see {@link KernelClock}): the
 * globals act virtually only inside entered scopes. Call
 * {@link KernelClock.release} in a `finally`, even when the run throws or
 * stops on a limit, or the process goes on with dispatching globals.
 * `epochMs`: the wall-clock instant of kernel time 0 (see {@link KernelClock.epochMs}).
 */
export function installKernelClock(kernel: Kernel, epochMs = 0): KernelClock {
  // node:crypto's random functions follow the entered scope's stream too (installed once per process).
  seedNodeCrypto(scopeStream);
  answerThreadPoolWhile(inScope);
  const c = new KernelClock(kernel, epochMs);
  c.install();
  lastClock = c;
  return c;
}
