import nodeTimers from 'node:timers';
import timersPromises from 'node:timers/promises';
import { syncBuiltinESMExports } from 'node:module';

/**
 * `node:timers` and `node:timers/promises` on whichever clock the simulated
 * code running now sees. The fake clocks (the kernel clock for services,
 * each hosted app's instance clock, the client bridge) replace the global
 * `setTimeout` & co. while simulated code runs; but a handler that writes
 * `import { setTimeout as sleep } from 'node:timers/promises'` — the usual
 * way to wait in modern Node — or `require('timers').setTimeout` reads the
 * module, got a real timer, and the run stopped with "the handler awaited
 * something outside the simulation" (exit 2) on a perfectly good service.
 *
 * The module functions are replaced once per process, at import (before any
 * user module loads, as for node:crypto), by dispatchers that call the
 * global of the same name *when someone has replaced it* (a simulated scope
 * is running, or a test installed fake timers) and the real function
 * otherwise: outside a simulation they are the real functions. The promise
 * forms are built on the global `setTimeout`/`setImmediate` then, with
 * AbortSignal support as Node's, and so is `timers/promises`' `setInterval`
 * (an async iterator: `for await (const _ of setInterval(100)) poll()`),
 * whose ticks until 2026-12 were real: a service polling for a duplicate's
 * answer stopped now and then with "never answered", at another run each
 * time, as the real interval ticked or not during a run.
 */
let installed = false;

type Fn = (...a: unknown[]) => unknown;

export function installNodeTimersDispatchers(): void {
  if (installed) return;
  installed = true;
  const t = nodeTimers as unknown as Record<string, Fn>;
  const names = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate'] as const;
  const real: Record<string, Fn> = {};
  for (const n of names) real[n] = t[n]!;
  const g = globalThis as unknown as Record<string, Fn>;
  const dispatchers: Record<string, Fn> = {};
  /** The global when something replaced it (a fake clock), else the real module function; never a dispatcher (no loop). */
  const pick = (n: string): Fn => {
    const f = g[n];
    return f === undefined || f === real[n] || f === dispatchers[n] ? real[n]! : f;
  };
  for (const n of names) dispatchers[n] = function (this: unknown, ...a: unknown[]) {
    return Reflect.apply(pick(n), globalThis, a);
  };
  for (const n of names) t[n] = dispatchers[n]!;

  const p = timersPromises as unknown as Record<string, Fn>;
  const realP = { setTimeout: p.setTimeout!, setImmediate: p.setImmediate! };
  const faked = (n: string) => pick(n) !== real[n];
  const abortError = (signal: AbortSignal) => Object.assign(new Error('The operation was aborted', { cause: signal.reason }), { name: 'AbortError', code: 'ABORT_ERR' });
  /** A promise settled by the (fake) global timer `arm`, rejecting on `signal` as Node's does. */
  const later = <T>(arm: (done: () => void) => unknown, clear: (h: unknown) => void, value: T, signal: AbortSignal | undefined): Promise<T> => {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        clear(h);
        reject(abortError(signal!));
      };
      const h = arm(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  };
  p.setTimeout = function (this: unknown, ...a: unknown[]) {
    if (!faked('setTimeout')) return Reflect.apply(realP.setTimeout, timersPromises, a);
    const [ms, value, opts] = a as [number | undefined, unknown, { signal?: AbortSignal } | undefined];
    return later((done) => pick('setTimeout')(done, ms), (h) => pick('clearTimeout')(h), value, opts?.signal);
  };
  p.setImmediate = function (this: unknown, ...a: unknown[]) {
    if (!faked('setImmediate')) return Reflect.apply(realP.setImmediate, timersPromises, a);
    const [value, opts] = a as [unknown, { signal?: AbortSignal } | undefined];
    return later((done) => pick('setImmediate')(done), (h) => pick('clearImmediate')(h), value, opts?.signal);
  };
  const realInterval = p.setInterval!;
  p.setInterval = function (this: unknown, ...a: unknown[]) {
    if (!faked('setInterval')) return Reflect.apply(realInterval, timersPromises, a);
    const [ms, value, opts] = a as [number | undefined, unknown, { signal?: AbortSignal } | undefined];
    return ticks(ms, value, opts?.signal);
  };
  /**
   * Node's async iterator (lib/timers/promises.js) on the global interval of
   * the clock that runs when iteration starts: ticks that came while the
   * loop body ran are yielded one by one, an abort rejects the waiting
   * `next()`, and leaving the loop clears the interval.
   */
  async function* ticks<T>(ms: number | undefined, value: T, signal: AbortSignal | undefined): AsyncGenerator<T, void, unknown> {
    if (signal?.aborted) throw abortError(signal);
    // Taken once: the clear must be the clock's that armed it, whichever code ends the loop.
    const arm = pick('setInterval');
    const clear = pick('clearInterval');
    let notYielded = 0;
    let wake: ((p?: Promise<never>) => void) | undefined;
    const interval = arm(() => {
      notYielded++;
      const w = wake;
      wake = undefined;
      w?.();
    }, ms);
    const onAbort = () => {
      clear(interval);
      const w = wake;
      wake = undefined;
      w?.(Promise.reject(abortError(signal!)));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal?.aborted) {
        if (notYielded === 0) await new Promise<void>((resolve) => (wake = resolve as (p?: Promise<never>) => void));
        for (; notYielded > 0; notYielded--) yield value;
      }
      throw abortError(signal);
    } finally {
      clear(interval);
      signal?.removeEventListener('abort', onAbort);
    }
  }
  // `scheduler.wait(ms)` is `setTimeout(ms, undefined, options)`.
  const scheduler = (timersPromises as unknown as { scheduler?: Record<string, Fn> }).scheduler;
  if (scheduler !== undefined && typeof scheduler.wait === 'function') {
    const realWait = scheduler.wait;
    scheduler.wait = function (this: unknown, ...a: unknown[]) {
      if (!faked('setTimeout')) return Reflect.apply(realWait, scheduler, a);
      return p.setTimeout!(a[0], undefined, a[1]);
    };
  }
  // ESM named imports of the builtins follow the module objects only after a sync.
  syncBuiltinESMExports();
}

// At import, not at the first run: a user's module loaded after this one
// (a service, an app, a client) then finds the dispatchers, however it takes them.
installNodeTimersDispatchers();
