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
  async wait(footprint?: Footprint): Promise<T> {
    if (!this.settled) await this.kernel.block(this, Infinity, 'wait', footprint);
    if (!this.ok) throw this.error;
    return this.value as T;
  }

  /**
   * Waits at most `timeoutMs` of virtual time. Returns `{ done: false }` on
   * timeout: a timeout is an expected outcome, not an exception.
   */
  async waitFor(timeoutMs: number, footprint?: Footprint): Promise<{ done: true; value: T } | { done: false }> {
    if (!this.settled) await this.kernel.block(this, timeoutMs, 'wait', footprint);
    if (!this.settled) return { done: false };
    if (!this.ok) throw this.error;
    return { done: true, value: this.value as T };
  }
}
