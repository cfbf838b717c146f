import type { Kernel, Task } from './kernel.js';
import type { Footprint } from './footprint.js';

/**
 * A one-shot value that kernel tasks can wait for. Unlike a bare Promise,
 * waiting on a Future tells the kernel the task is blocked, and resolving it
 * makes the waiters runnable through the scheduler (one choice point), never
 * by running them behind the kernel's back.
 */
export class Future<T> {
  settled = false;
  ok = true;
  value: T | undefined;
  error: unknown;
  /** @internal tasks waiting, in arrival order */
  waiters: Task[] = [];

  constructor(private readonly kernel: Kernel) {}

  resolve(value: T): void {
    if (this.settled) return;
    this.settled = true;
    this.value = value;
    this.kernel.wakeWaiters(this);
  }

  reject(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.ok = false;
    this.error = error;
    this.kernel.wakeWaiters(this);
  }

  /**
   * Waits (blocking the current task) until settled; throws if rejected.
   * `footprint` declares what the task does when it resumes (default: anything).
   */
  wait(footprint?: Footprint): Promise<T> {
    // Not `async`: the value is read by the kernel's resume hook, which saves
    // a promise and a microtask hop per wait (see Kernel.yieldThen).
    if (!this.settled) return this.kernel.block(this, Infinity, 'wait', footprint, read<T>, this);
    return this.ok ? Promise.resolve(this.value as T) : Promise.reject(this.error);
  }


  /**
   * Waits at most `timeoutMs` of virtual time. Returns `{ done: false }` on
   * timeout: a timeout is an expected outcome, not an exception.
   */
  waitFor(timeoutMs: number, footprint?: Footprint): Promise<{ done: true; value: T } | { done: false }> {
    if (!this.settled) return this.kernel.block(this, timeoutMs, 'wait', footprint, readTimed<T>, this);
    try {
      return Promise.resolve(readTimed(this));
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

/** A settled future's outcome: the value, or the rejection thrown (a plain function: see Kernel.yieldThen). */
function read<T>(f: Future<T>): T {
  if (!f.ok) throw f.error;
  return f.value as T;
}

/** The outcome after a wait with a timeout: not settled is `{ done: false }`. */
function readTimed<T>(f: Future<T>): { done: true; value: T } | { done: false } {
  if (!f.settled) return { done: false };
  if (!f.ok) throw f.error;
  return { done: true, value: f.value as T };
}
