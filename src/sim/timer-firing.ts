import type { ClockScope, KernelClock, UncaughtKind } from './fake-timers.js';
import type { Prng } from '../random/prng.js';
import type { ProcessIdentity } from './process-identity.js';
import type { Task } from './kernel.js';

/**
 * One firing of a timer whose callback returned a promise (an `async`
 * callback: `setInterval(async () => { await renewLease(); … })`), fired as
 * a kernel event: the code after its first `await` runs in microtasks after
 * the event, so the clock runs it as kernel work of its own — a task spawned
 * `first` (its first step runs before any other event or task), with this
 * scope entered. The scope is its owner's in all it reads (clock skew,
 * stream, identity, pause, uncaught errors), so the callback's code sees
 * what its synchronous part saw; idle on one of its own timers, its task
 * parks on kernel time as a request's does — but not on one armed after the
 * run ended, which stops with the run as any late timer does (an async
 * heartbeat loop would run to the kernel's limit); when such a timer fires
 * after all (the recovery phase resumes it), it resumes the firing in a new
 * task. A sync callback never gets one.
 */
export class FiringScope implements ClockScope {
  /** The kernel task running the continuation now (set as it is spawned); undefined once it let go or ended. */
  task: Task<unknown> | undefined;
  /** The callback's promise has settled: nothing of it is left to run. */
  settled = false;
  /** Set when the code awaits nothing the firing can wait on: its task lets go of it. */
  private letGo: (() => void) | undefined;

  constructor(
    /** The scope that armed the timer (a request's, a process's): never a firing. */
    readonly owner: ClockScope,
    /** The run's clock; the next phase's once its timers are carried there ({@link KernelClock.carryTo}). */
    public clock: KernelClock,
    /** The callback's promise. */
    readonly done: PromiseLike<unknown>,
  ) {}

  /** The owner's: the trace's timer lines and the messages name the request or process. */
  get name(): string {
    return this.owner.name;
  }

  get offsetMs(): number {
    return this.owner.offsetMs;
  }

  get rng(): Prng {
    return this.owner.rng;
  }

  get identity(): ProcessIdentity | undefined {
    return this.owner.identity;
  }

  where(): string {
    return `${this.owner.where?.() ?? this.owner.name}, in a timer callback after an await`;
  }

  /** Waits on kernel time in the firing's task, and then out a pause of the owner's process (its event loop runs nothing meanwhile). */
  async park(ms: number): Promise<void> {
    const k = this.clock.kernel;
    this.clock.leave();
    await k.sleep(ms);
    const until = this.owner.frozenUntil?.();
    if (until !== undefined && until > k.now) await k.sleep(until - k.now);
    this.clock.enter(this);
  }

  /**
   * The code awaits neither the kernel nor a timer it may wait for (a
   * promise some request settles; a timer armed after the run ended, which
   * stops with the run as a re-armed setTimeout does): the firing's task
   * ends. The code runs on wherever that promise settles, as in Node (a
   * request's turn); a timer of its own that fires later resumes the
   * firing in a task again.
   */
  parkOnOthers(): boolean {
    const go = this.letGo;
    if (go === undefined) return false;
    this.letGo = undefined;
    this.clock.leave();
    go();
    return true;
  }

  frozenUntil(): number | undefined {
    return this.owner.frozenUntil?.();
  }

  /** Its own async code may be what a timer of it resolves: that runs in its task, not in a host turn. */
  settlesTimerWork(): boolean {
    return false;
  }

  uncaught(error: unknown, kind?: UncaughtKind): boolean {
    return this.owner.uncaught?.(error, kind) === true;
  }

  /** Whether the callback's promise is watched already (its rejection is reported once). */
  private watched: Promise<void> | undefined;

  /**
   * The task's body: runs the continuation of {@link done} in this scope
   * until it settles or lets go; `rejected` gets what it rejects with.
   */
  async run(rejected: (e: unknown) => void): Promise<void> {
    this.clock.enter(this);
    this.watched ??= Promise.resolve(this.done).then(
      () => void (this.settled = true),
      (e: unknown) => {
        this.settled = true;
        rejected(e);
      },
    );
    const released = new Promise<void>((resolve) => (this.letGo = resolve));
    await Promise.race([this.watched, released]);
    if (this.letGo !== undefined) {
      this.letGo = undefined;
      this.clock.leave();
    }
  }
}

/** The scope a timer's firing is owned by: a firing's own timers belong to the scope that armed the first. */
export function rootScope(s: ClockScope): ClockScope {
  return s instanceof FiringScope ? s.owner : s;
}
