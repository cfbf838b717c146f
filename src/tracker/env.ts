import type { Footprint } from '../sim/footprint.js';

/**
 * The tracker's only window onto time and scheduling. The service never reads
 * a real clock or schedules a real timer itself: in simulation the kernel
 * supplies virtual time and decides which request runs next at every
 * {@link StepEnv.step}; for real, `realEnv()` (real-env.ts) maps the same
 * calls onto the wall clock and real timers.
 */

/**
 * A promise the scheduler knows about. Await `wait()` instead of a bare
 * promise so a simulator can see that the task is blocked (and on what).
 */
export interface Deferred<T> {
  resolve(v: T): void;
  reject(e: unknown): void;
  wait(): Promise<T>;
}

/** Time and interleaving, supplied per request by the caller of `handle`. */
export interface StepEnv {
  /** Current time in ms (virtual in simulation). */
  now(): number;
  /**
   * An interleaving point between two transactions; the simulator may run
   * other requests here. The label names the phase about to run
   * (see `STEP_LABELS` in variants.ts). `footprint` declares what that
   * phase may touch (see src/sim/footprint.ts); omitted, it may touch
   * anything. Real mode ignores it.
   */
  step(label: string, footprint?: Footprint): Promise<void>;
  /** Wait `ms` of (virtual) time; `footprint` declares what the request does when it wakes (default: anything). */
  sleep(ms: number, footprint?: Footprint): Promise<void>;
  /** A promise-like the simulator knows about. */
  defer<T>(): Deferred<T>;
  /**
   * {@link sleep}, ended early when `wake` (from {@link defer}) resolves: the
   * clock parks a request idle on its own timer so, and wakes it when its
   * code runs on in another request's turn. Without `wake` resolved it is
   * `sleep` exactly (same trace, same decisions). Simulation only.
   */
  sleepOrWake?(ms: number, wake: Deferred<void>, footprint?: Footprint): Promise<void>;
  /** Says in the trace what the host does to this request (a fault's pause, slow processing); shown, not hashed. Real mode: absent. */
  note?(event: string): void;
  /** Says what this request's step `event` did (a store command's keys and arguments, and its answer); shown, not hashed. Real mode: absent. */
  detail?(event: string, call: string, answer: string): void;
}
