import FakeTimers from '@sinonjs/fake-timers';
import { Prng } from '../random/prng.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { seedNodeCrypto, uuidFrom } from '../sim/seeded-node-crypto.js';
import { identifyProcessesBy, type ProcessIdentity } from '../sim/process-identity.js';
import '../sim/virtual-node-timers.js';
import { PROMPT_SUBTLE, promptSubtle } from '../sim/sync-subtle.js';
import { answerThreadPoolWhile } from '../sim/sync-thread-pool.js';
import { timeoutSignal } from '../sim/virtual-abort-timeout.js';
import { quietOutputSwaps } from './quiet-output.js';
import { noListenSwap } from './no-listen.js';
import { databaseFileSwaps } from './database-file.js';
import { noSocketSwap } from './no-socket.js';

/**
 * One hosted app process's machine: its own fake clock (timers, immediates,
 * Date, performance.now) on the kernel's virtual time plus the instance's
 * clock offset, its own seeded randomness, and its own identity
 * (`process.pid`, `os.hostname()`). It replaces the process
 * globals only while one of this instance's requests runs (see
 * {@link InstanceClock.enter}); a kill drops it with the instance's memory,
 * so a dead process's timers never fire.
 *
 * The swap is per turn rather than per run because several instances, with
 * different clock offsets, run in one Node process: whichever request the
 * kernel runs now decides which machine the globals are.
 */

/** The virtual epoch apps see: kernel time 0 is 2026-01-01T00:00:00Z (libraries treat a zero timestamp as "unset"); the one a user's service sees too (src/sim/epoch.ts). */
export const APP_EPOCH_MS = SIM_EPOCH_MS;

type Swap = [object, PropertyKey, unknown];


/**
 * What the app prints is dropped while it runs in simulation (a campaign
 * runs it thousands of times; Express alone prints every error's stack
 * outside NODE_ENV=test): its console, and its loggers' writes to stdout
 * and stderr (quiet-output.ts). RETRYSIM_APP_LOGS=1 keeps it.
 */
const keepLogs = process.env.RETRYSIM_APP_LOGS === '1';
const quiet = () => undefined;

let entered: InstanceClock | undefined;

/** A timer's kind, as in the name of the function that armed it (`set${kind}`). */
export type TimerKind = 'Timeout' | 'Interval';

/** The kind of timer whose callback runs now (synchronously), if any: what a store command sent from it is attributed to. */
let firing: TimerKind | undefined;

/** Whether the app code running now is a timer's callback (its synchronous part), and which kind. */
export function firingTimer(): TimerKind | undefined {
  return firing;
}

/** `set` with its callback marked as a timer's while it runs (a cleanup job's store commands are its own, not the request's in whose turn it fires). */
function marked<F extends (cb: unknown, ...rest: unknown[]) => unknown>(kind: TimerKind, set: F): F {
  return ((cb: unknown, ...rest: unknown[]) => {
    if (typeof cb !== 'function') return set(cb, ...rest);
    return set(function (this: unknown, ...args: unknown[]) {
      const was = firing;
      firing = kind;
      try {
        return (cb as (...a: unknown[]) => unknown).apply(this, args);
      } finally {
        firing = was;
      }
    }, ...rest);
  }) as F;
}
/** The entered instance's stream, for node:crypto's dispatchers (src/sim/seeded-node-crypto.ts). */
const enteredStream = (): Prng | undefined => entered?.rng;
/**
 * The entered instance's process, for process.pid and os.hostname()
 * (src/sim/process-identity.ts). Rank -1, as its stream: its timer task
 * enters no request scope, and its requests' scopes name the same process.
 */
identifyProcessesBy(() => entered?.identity, -1);
/** Installed only while the instance is entered, so always active when called: thread-pool calls answer at once (sync-subtle.ts). */
const always = () => true;
/** Whether an instance's code runs now, for node:zlib's and node:crypto's dispatchers (sync-thread-pool.ts). */
answerThreadPoolWhile(() => entered !== undefined);

export class InstanceClock {
  readonly clock: FakeTimers.Clock;
  private readonly epochMs: number;
  /** @internal The instance's seeded stream (read by node:crypto's dispatchers while it is entered). */
  readonly rng: Prng;
  private readonly swaps: Swap[];
  private saved: Swap[] = [];

  /**
   * @param nowMs the instance's time now (kernel time plus its offset); @param seed its randomness;
   * @param identity the process it is (a new one at each restart: a kill drops this machine); undefined: the machine's (real mode).
   */
  constructor(nowMs: number, seed: number, readonly identity?: ProcessIdentity) {
    // Real mode (serve/conformance) hands the wall clock, already an epoch time: keep it. Virtual time starts at 0.
    this.epochMs = nowMs >= 1e12 ? 0 : APP_EPOCH_MS;
    this.clock = FakeTimers.withGlobal(globalThis).createClock(this.epochMs + Math.floor(nowMs), 100_000);
    this.rng = new Prng(seed);
    // Rank -1: an app's node:crypto follows the same stream as its global crypto.randomUUID (this instance's), ahead of the request scope's.
    seedNodeCrypto(enteredStream, -1);
    const c = this.clock;
    const rng = this.rng;
    const realTimeout = AbortSignal.timeout as (ms: unknown) => AbortSignal;
    this.swaps = [
      [globalThis, 'setTimeout', marked('Timeout', c.setTimeout as never)], // real-time: allowed (the instance's fake clock)
      [globalThis, 'clearTimeout', c.clearTimeout],
      [globalThis, 'setInterval', marked('Interval', c.setInterval as never)], // real-time: allowed (the instance's fake clock)
      [globalThis, 'clearInterval', c.clearInterval],
      [globalThis, 'setImmediate', c.setImmediate], // real-time: allowed (the instance's fake clock)
      [globalThis, 'clearImmediate', c.clearImmediate],
      [globalThis, 'Date', c.Date],
      [performance, 'now', () => c.now - this.epochMs], // real-time: allowed (the instance's fake clock)
      ...(typeof (c as { hrtime?: unknown }).hrtime === 'function' ? [[process, 'hrtime', (c as unknown as { hrtime: unknown }).hrtime] as Swap] : []), // real-time: allowed (the instance's fake clock)
      [Math, 'random', () => rng.next()], // real-time: allowed (seeded)
      [globalThis.crypto, 'randomUUID', () => uuidFrom(rng)], // real-time: allowed (seeded)
      // Node's AbortSignal.timeout arms a timer of its own, which this clock would not reach.
      [AbortSignal, 'timeout', (ms: unknown) => timeoutSignal(ms, c.setTimeout, realTimeout)], // real-time: allowed (the instance's fake clock)
      ...PROMPT_SUBTLE.map((m): Swap => {
        const real = (globalThis.crypto.subtle as unknown as Record<string, unknown>)[m];
        return [globalThis.crypto.subtle, m, promptSubtle(m, always, () => real)];
      }),
      ...(keepLogs ? [] : (['log', 'info', 'warn', 'error', 'debug'] as const).map((m): Swap => [console, m, quiet])),
      ...(keepLogs ? [] : quietOutputSwaps()),
      // retrysim delivers the requests: a real port per simulated process would collide (no-listen.ts).
      noListenSwap(),
      // A SQLite file of the app's own outlives the simulated runs (database-file.ts); real mode (no identity) keeps it.
      ...(identity !== undefined ? databaseFileSwaps() : []),
      // A simulated process reaches only the simulated store: no TCP connection of its own (no-socket.ts).
      ...(identity !== undefined ? [noSocketSwap()] : []),
    ];
  }

  /**
   * Moves the clock to the instance's time now (firing the timers due by
   * then, inside the caller's turn). `frozen`: the process is stalled by a
   * pause (a GC pause stops its event loop): the time moves and no timer
   * fires; each pending one is pushed back by the time that passed, so a
   * lease-renewal heartbeat does not beat while its holder is frozen.
   */
  advanceTo(nowMs: number, frozen = false): void {
    const target = this.epochMs + Math.floor(nowMs);
    if (target <= this.clock.now) return;
    if (frozen) this.clock.setSystemTime(target);
    else this.tick(target - this.clock.now);
  }

  /** Runs the immediates and 0 ms timers due now. Answers whether any ran. */
  runDue(): boolean {
    const before = this.clock.countTimers();
    if (before === 0 || this.earliest()! > this.clock.now) return false;
    this.tick(0);
    return true;
  }

  /**
   * A timer callback that threw: Node ends the process on such an uncaught
   * exception. fake-timers runs the rest of the tick and then rethrows the
   * first one out of `tick`, which would unwind the host (and read as a bug
   * in retrysim); it is kept here for the host to crash the process on
   * ({@link takeUncaught}).
   */
  private uncaught: { error: unknown } | undefined;

  private tick(ms: number): void {
    try {
      this.clock.tick(ms);
    } catch (e) {
      this.uncaught ??= { error: e };
    }
  }

  /** The first exception a timer callback threw since the last call, if any (and forgets it). */
  takeUncaught(): { error: unknown } | undefined {
    const u = this.uncaught;
    this.uncaught = undefined;
    return u;
  }

  /** The earliest pending timer's due time on the instance clock (epoch ms), if any. */
  earliest(): number | undefined {
    const timers = (this.clock as unknown as { timers?: Map<number, { callAt: number }> }).timers;
    if (timers === undefined) return undefined;
    let min: number | undefined;
    for (const t of timers.values()) if (min === undefined || t.callAt < min) min = t.callAt;
    return min;
  }

  /**
   * The earliest pending one-shot timer (a `setTimeout`, not an interval
   * nor an immediate: those a request's pump leaves are the runtime's own)
   * with an id up to `maxId` (ids only grow: a higher id was armed later), if any.
   */
  nextOneShot(maxId = Infinity): { id: number; callAt: number } | undefined {
    const timers = (this.clock as unknown as { timers?: Map<number, { id: number; callAt: number; interval?: number; immediate?: boolean }> }).timers;
    if (timers === undefined) return undefined;
    let min: { id: number; callAt: number } | undefined;
    for (const t of timers.values()) if (t.interval === undefined && t.immediate !== true && t.id <= maxId && (min === undefined || t.callAt < min.callAt)) min = { id: t.id, callAt: t.callAt };
    return min;
  }

  /** The highest id of a pending timer (0: none). */
  lastTimerId(): number {
    const timers = (this.clock as unknown as { timers?: Map<number, { id: number }> }).timers;
    let max = 0;
    if (timers !== undefined) for (const t of timers.values()) max = Math.max(max, t.id);
    return max;
  }

  /** Ms of instance time until the earliest timer (undefined: none). */
  untilNextTimer(): number | undefined {
    const e = this.earliest();
    return e === undefined ? undefined : Math.max(0, e - this.clock.now);
  }

  /** Makes the process globals this instance's machine. */
  enter(): void {
    if (entered === this) return;
    if (entered !== undefined) entered.leave();
    // What is there now (the real globals, or a test's spy on console.log) comes back on leave.
    this.saved = this.swaps.map(([o, k]): Swap => [o, k, (o as Record<PropertyKey, unknown>)[k]]);
    for (const [o, k, v] of this.swaps) Object.defineProperty(o, k, { value: v, configurable: true, writable: true });
    entered = this;
  }

  /** Gives the process back the globals it had when this machine entered. */
  leave(): void {
    if (entered !== this) return;
    for (const [o, k, v] of this.saved) Object.defineProperty(o, k, { value: v, configurable: true, writable: true });
    this.saved = [];
    entered = undefined;
  }

}
