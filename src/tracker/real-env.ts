import type { Deferred, StepEnv } from './env.js';

/**
 * The real-mode environment: wall-clock time, real timers, and no
 * interleaving control (a step is an already-resolved promise). This is the
 * only file in src/tracker allowed to touch Date or setTimeout.
 *
 * @example
 * const res = await instance.handle(req, realEnv());
 */
export function realEnv(): StepEnv {
  return {
    now: () => Date.now(),
    step: () => Promise.resolve(),
    sleep: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    defer: plainDeferred,
  };
}

/**
 * A Deferred over an ordinary promise. A rejection nobody waits for is
 * expected (a failed single-flight winner with no losers), so it is marked
 * handled here rather than crashing the process as an unhandled rejection.
 */
export function plainDeferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { resolve, reject, wait: () => promise };
}
