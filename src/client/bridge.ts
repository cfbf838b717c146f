import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import diagnostics from 'node:diagnostics_channel';
import FakeTimers from '@sinonjs/fake-timers';
import type { Kernel } from '../sim/kernel.js';
import type { Future } from '../sim/future.js';
import type { Prng } from '../random/prng.js';
import { seedNodeCrypto, uuidFrom } from '../sim/seeded-node-crypto.js';
import '../sim/virtual-node-timers.js';
import { timeoutSignal } from '../sim/virtual-abort-timeout.js';
import { PROMPT_SUBTLE, promptSubtle, type PromptSubtleMethod } from '../sim/sync-subtle.js';
import { routeFetchDispatcher } from './global-fetch.js';
import { guardNodeHttp } from './node-http-guard.js';
import { guardSockets } from './socket-guard.js';
import { refuseUndiciDispatcher } from './undici-dispatcher.js';

/**
 * Runs a user's client code — ordinary async code with setTimeout,
 * setImmediate, Date, performance.now, process.hrtime, AbortSignal.timeout,
 * Math.random, crypto.randomUUID, crypto.getRandomValues and crypto.subtle — on the kernel's
 * virtual time, from one kernel task, alongside requests it makes through a
 * simulated `fetch`. Unlike `runOnVirtualTime` (one computation that only
 * waits on timers), the code may also wait on requests in flight: the
 * bridge parks its task until the earlier of the next fake timer and a
 * request finishing, then fires due timers and delivers finished requests
 * (in that order), and lets the code's promise chains settle. User code
 * therefore only ever runs while this task holds the kernel. Randomness is
 * seeded from the run (replays draw the same keys); nextTick and
 * queueMicrotask are never faked (that hangs promise code and vitest).
 */
export interface ClientBridge {
  /** Wakes the bridge: a request finished (its delivery is queued with {@link ClientBridge.deliver}). */
  deliver(fn: () => void): void;
  /** Counts requests in flight, so the bridge knows the code waits on more than timers. */
  inFlight: number;
  /**
   * Work the client's code started that needs a few host turns but no time
   * (reading a `Request`'s or a byte body's text): the bridge lets the code
   * run on, at the same virtual instant, until it is done, so what follows
   * it (the request going on the wire) happens at a point fixed by the run.
   */
  hold(work: Promise<unknown>): void;
}

let active = false;
/** The active run's stream, for node:crypto's dispatchers (src/sim/seeded-node-crypto.ts): rank 1, after a service handler's own. */
let activeRng: Prng | undefined;
const bridgeStream = (): Prng | undefined => activeRng;
/** Undoes the active run's fakes; set while a run is active. */
let cleanup: (() => void) | undefined;

/**
 * Ends the active bridged run's fakes (clock, timers, randomness) if it is
 * still installed. A run whose kernel stopped on a limit leaves its bridge
 * task parked forever, so its own `finally` never runs: the caller of
 * `kernel.run()` calls this, or the process would go on with a fake clock.
 */
export function releaseBridge(): void {
  const c = cleanup;
  cleanup = undefined;
  c?.();
}

/** The client code waits on neither a timer nor a request: it can never finish on virtual time. */
export class ClientStuckError extends Error {}

// Captured before any fake clock is installed: the bridge needs the real
// setImmediate to let promise chains settle between rounds. It only orders
// host-level work; it reads no time.
const realSetImmediate = globalThis.setImmediate; // real-time: allowed (microtask drain, no time read)

function settle(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve)); // real-time: allowed (see above)
}

/** The kernel time the clock's next timer is due at (its timers are due at wall-clock ms, `epochMs` + kernel time). */
function earliestTimer(clock: FakeTimers.Clock, epochMs: number): number | undefined {
  const timers = (clock as unknown as { timers?: Map<number, { callAt: number }> }).timers;
  if (timers === undefined) return undefined;
  let min: number | undefined;
  for (const t of timers.values()) if (min === undefined || t.callAt < min) min = t.callAt;
  return min === undefined ? undefined : min - epochMs;
}

/** Whether a timer handle keeps the event loop alive (Node's `hasRef()`; a handle without it does). */
function refed(h: unknown): boolean {
  const f = (h as { hasRef?: () => boolean } | undefined)?.hasRef;
  return typeof f !== 'function' || f.call(h);
}

/** Whether a timer of the clock that keeps the event loop alive is due by kernel time `byMs` (`handles`: the handles the code was given, by timer id). */
function refedTimerBy(clock: FakeTimers.Clock, epochMs: number, handles: ReadonlyMap<number, unknown>, byMs: number): boolean {
  const timers = (clock as unknown as { timers?: Map<number, { callAt: number; id: number }> }).timers;
  if (timers === undefined) return false;
  for (const [id, t] of timers) if (t.callAt - epochMs <= byMs && refed(handles.get(Number(id)))) return true;
  return false;
}

/**
 * A computation the bridge stopped driving at `atMs`, its `stopAtMs`: it had
 * not settled by then (a client past its deadline that keeps retrying).
 */
export class ClientStoppedError extends Error {
  constructor(readonly atMs: number) {
    super(`still running at t=${atMs} ms: stopped`);
    this.name = 'ClientStoppedError';
  }
}

/** What the caller of {@link runClientsOnVirtualTime} may hook. */
export interface BridgeHooks {
  stopAtMs?: ReadonlyArray<number | undefined>;
  onStop?: (i: number, atMs: number) => void;
  /**
   * The simulated fetch of computation i for a call of the *global* fetch
   * made by its code (undefined: not routed — another host, say). Client
   * code written for production calls the global fetch (a module-level ky
   * or p-retry wrapper) rather than threading the one it is handed.
   */
  routeGlobalFetch?: (i: number, url: string) => typeof fetch | undefined;
  /** A global fetch call that was not routed: it would have left the simulation. */
  onGlobalFetch?: (call: string) => void;
  /** A request through node:http or node:https (axios's default adapter, got): refused, the simulation carries fetch only. */
  onNodeHttp?: (call: string) => void;
  /**
   * A request sent through undici rather than the fetch the simulation
   * routes: the `undici` package's `fetch` or `request`, or Node's own fetch
   * held from before retrysim was imported. Through undici's global
   * dispatcher it is refused at once (src/client/undici-dispatcher.ts); with
   * a dispatcher of the client's own it is only seen as it starts
   * (`undici:request:create`), and leaves the simulation (real DNS, real sockets).
   */
  onRealFetch?: (call: string) => void;
  /** A socket opened during the run (`net.connect`, `tls.connect`: undici with a dispatcher of its own, say): refused before any DNS query. */
  onSocket?: (call: string) => void;
  /**
   * The wall-clock instant of kernel time 0 that the code's `Date` reads, in
   * ms since 1970 (a scenario's `client.epochMs`: 2026-01-01 for files found
   * since it was recorded, src/sim/epoch.ts). Default 0, the 1970 clock files
   * found before it ran on. `performance.now` and `process.hrtime` do not
   * read it: they count from the run's start, as on a real machine.
   */
  epochMs?: number;
  /**
   * Kernel time up to which the client's code runs on after every
   * computation has settled, while it keeps the process alive: a request it
   * sent and still awaits, or a timer it armed that keeps the event loop
   * alive (not one `unref()`ed, such as `AbortSignal.timeout`'s). A real
   * process does not exit while those are pending: a request fired after
   * the call settled (a confirmation, a fire-and-forget duplicate) reaches
   * the service. Without it the bridge stopped at the last settle, and such
   * a request was dropped — or sent only when another call kept the run
   * alive, so a failure it caused shrank to more operations than it needs.
   * The client run gives its last stop time (the last deadline + 1 ms).
   */
  afterSettledUntilMs?: number;
}

/**
 * Which computation of the bridge the running code belongs to: carried
 * through its awaits, and into its timer callbacks (the fake clock fires
 * them from the bridge's loop, so each is bound where it was armed).
 */
const computation = new AsyncLocalStorage<number>();

/**
 * Runs every computation of `starts` (each is handed the bridge, to give
 * its fetch) on virtual time until all have settled. Resolves with their
 * outcomes, in order. Must be called from inside a kernel task.
 * `hooks.stopAtMs[i]`, when given, is the virtual time after which
 * computation i, if it has not settled, is let go: its outcome is a
 * {@link ClientStoppedError} and `onStop(i, atMs)` is told (the caller makes
 * its fetch go quiet). Without it a client that never stops retrying ran the
 * simulation into its time or event limit. While the code runs, the global
 * `fetch` is not the network: a call to it rejects (`TypeError('fetch
 * failed')`, as an unreachable host does) and `onGlobalFetch` is told what
 * was asked, so the caller can name it; the real one would have left the
 * simulation (real DNS, real sockets, real time).
 */
export async function runClientsOnVirtualTime<T>(
  kernel: Kernel,
  rng: Prng,
  starts: ReadonlyArray<(bridge: ClientBridge) => Promise<T>>,
  roundsMax = 100_000,
  hooks: BridgeHooks = {},
): Promise<Array<{ ok: true; value: T } | { ok: false; error: unknown }>> {
  const stop = hooks.stopAtMs === undefined ? undefined : { atMs: hooks.stopAtMs, onStop: hooks.onStop };
  if (active) throw new Error('runClientsOnVirtualTime: another bridged run is already active (the fake clock is process-global)');
  active = true;
  activeRng = rng;
  seedNodeCrypto(bridgeStream, 1);
  let wake: Future<void> = kernel.future<void>();
  const deliveries: Array<() => void> = [];
  const held = new Set<Promise<unknown>>();
  const bridge: ClientBridge = {
    inFlight: 0,
    hold(work) {
      const p = work.then(() => undefined, () => undefined).finally(() => held.delete(p));
      held.add(p);
    },
    deliver(fn) {
      deliveries.push(fn);
      wake.resolve();
    },
  };
  // The fake clock keeps wall-clock ms (epoch + kernel time): its Date reads them, its timers are due at
  // them. performance.now and hrtime count from install (fake-timers measures them from its start), so they
  // stay relative. Kernel time is clock time minus the epoch wherever the two meet (the timers, the ticks).
  const epochMs = hooks.epochMs ?? 0;
  const clock = FakeTimers.withGlobal(globalThis).install({
    now: kernel.now + epochMs,
    // An explicit list: nextTick and queueMicrotask stay real (faked, promise code and vitest hang).
    // setImmediate is a timer due now, fired before time moves: real, a client yielding with it a few
    // times was taken for one waiting on nothing. hrtime: a budget measured with it read real time.
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'setImmediate', 'clearImmediate', 'Date', 'performance', 'hrtime'], // real-time: allowed (names of what is faked)
  });
  // Which computation calls the global fetch needs tracking only when there are several: its promise
  // hooks make every promise of the process about 3× dearer while on (client campaigns ~18 % slower).
  const tracked = hooks.routeGlobalFetch !== undefined && starts.length > 1;
  const restore: Array<() => void> = [];
  const swap = <O extends object, K extends keyof O>(o: O, k: K, v: O[K]) => {
    const old = o[k];
    Object.defineProperty(o, k, { value: v, configurable: true, writable: true });
    restore.push(() => Object.defineProperty(o, k, { value: old, configurable: true, writable: true }));
  };
  cleanup = () => {
    for (const r of restore.reverse()) r();
    clock.uninstall();
    // Its promise hooks cost every promise of the process while enabled: only while a bridged run is.
    computation.disable();
    active = false;
    activeRng = undefined;
  };
  swap(Math, 'random', () => rng.next()); // real-time: allowed (replaces real randomness with the run's seeded stream)
  swap(globalThis.crypto, 'randomUUID', (() => uuidFrom(rng)) as typeof globalThis.crypto.randomUUID); // real-time: allowed (seeded, see above)
  // Web Crypto as a service's code sees it (src/sim/fake-timers.ts): bytes from the run's stream (nanoid's
  // source), and digests and signatures answered at once (from the thread pool, the bridge saw a client
  // waiting on nothing it drives and refused it).
  const realGetRandomValues = globalThis.crypto.getRandomValues.bind(globalThis.crypto); // real-time: allowed (kept for what the stream does not fill)
  swap(globalThis.crypto, 'getRandomValues', (<T extends ArrayBufferView | null>(a: T): T => { // real-time: allowed (seeded, see above)
    if (a === null || !ArrayBuffer.isView(a) || a instanceof Float32Array || a instanceof Float64Array || a instanceof DataView) return realGetRandomValues(a as never) as T; // real-time: allowed (Node's own refusal of what it does not fill)
    const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    for (let i = 0; i < bytes.length; i++) bytes[i] = rng.nextU32() & 0xff;
    return a;
  }) as typeof globalThis.crypto.getRandomValues); // real-time: allowed (the type of what is replaced)
  const subtle = globalThis.crypto.subtle as unknown as Record<PromptSubtleMethod, unknown>;
  for (const m of PROMPT_SUBTLE) {
    const real = subtle[m];
    swap(subtle, m, promptSubtle(m, () => true, () => real) as never);
  }
  // The global fetch, called by the code of computation i for the simulated service, is that computation's
  // simulated fetch (the caller says which URLs); anything else would reach the real network.
  if (typeof globalThis.fetch === 'function') {
    const runFetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      const i = tracked ? computation.getStore() : 0;
      const routed = i === undefined ? undefined : hooks.routeGlobalFetch?.(i, url);
      if (routed !== undefined) return routed(input, init);
      const method = (init?.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')).toUpperCase();
      hooks.onGlobalFetch?.(`${method} ${url}`);
      return Promise.reject(new TypeError('fetch failed', { cause: new Error('retrysim: the global fetch does not reach the simulated network; use the fetch run(fetch, op) is handed') }));
    }) as typeof fetch;
    swap(globalThis, 'fetch', runFetch);
    // The same for a reference to the global taken when the client's module loaded (src/client/global-fetch.ts).
    routeFetchDispatcher(runFetch);
    restore.push(() => routeFetchDispatcher(undefined));
  }
  // node:http(s) would leave the simulation (real DNS, real sockets): such a request throws, and the caller names it.
  guardNodeHttp((call) => {
    hooks.onNodeHttp?.(call);
    return new Error(`retrysim: a node:http request (${call}) does not reach the simulated network (it carries fetch only)`);
  });
  restore.push(() => guardNodeHttp(undefined));
  // undici's global dispatcher (the undici package's fetch and request, Node's own fetch held from before the
  // fetch dispatcher was in place): refused at once, before any DNS query, and named.
  restore.push(refuseUndiciDispatcher((call) => {
    hooks.onRealFetch?.(call);
    return new Error(`retrysim: a request through undici (${call}) does not reach the simulated network (it carries the fetch run(fetch, op) is handed, and the global fetch)`);
  }));
  // A socket (undici with a dispatcher of its own, a library on raw sockets): refused before any DNS query, and named.
  guardSockets((call) => {
    hooks.onSocket?.(call);
    return new Error(`retrysim: a socket to ${call} does not reach the simulated network (it carries the fetch run(fetch, op) is handed, and the global fetch)`);
  });
  restore.push(() => guardSockets(undefined));
  // One with a dispatcher of its own: seen as it starts (and named); its socket is refused above.
  if (hooks.onRealFetch !== undefined) {
    const onRealFetch = hooks.onRealFetch;
    const seen = (m: unknown) => {
      const r = (m as { request?: { method?: string; origin?: string; path?: string } }).request;
      onRealFetch(`${r?.method ?? 'GET'} ${r?.origin ?? ''}${r?.path ?? ''}`);
    };
    diagnostics.subscribe('undici:request:create', seen);
    restore.push(() => diagnostics.unsubscribe('undici:request:create', seen));
  }
  // The handle each timer was given, by id: one `unref()`ed does not keep the client's process alive (afterSettledUntilMs).
  const handles = new Map<number, unknown>();
  if (hooks.afterSettledUntilMs !== undefined) {
    for (const k of ['setTimeout', 'setInterval'] as const) { // real-time: allowed (wraps the fake clock's, installed above)
      const fake = globalThis[k] as (...a: unknown[]) => unknown;
      swap(globalThis, k, ((...a: unknown[]) => {
        const h = fake(...a);
        handles.set(Number(h), h);
        return h;
      }) as never);
    }
  }
  // Timer callbacks run in the computation that armed them (the fake clock calls them from this loop).
  if (tracked) {
    for (const k of ['setTimeout', 'setInterval', 'setImmediate'] as const) { // real-time: allowed (wraps the fake clock's, installed above)
      const fake = globalThis[k] as (fn: unknown, ...rest: unknown[]) => unknown;
      swap(globalThis, k, ((fn: unknown, ...rest: unknown[]) => fake(typeof fn === 'function' && computation.getStore() !== undefined ? AsyncResource.bind(fn as (...a: unknown[]) => unknown) : fn, ...rest)) as never);
    }
  }
  // AbortSignal.timeout runs on Node's own timers, which the fake clock does not reach.
  const realTimeout = AbortSignal.timeout as (ms: unknown) => AbortSignal;
  // Its timer is unref()ed, as Node's is: it keeps no process alive.
  const armUnrefed = (fire: () => void, ms: number) => {
    const h = clock.setTimeout(fire, ms) as unknown as { unref?: () => unknown }; // real-time: allowed (the fake clock's setTimeout)
    h.unref?.();
    handles.set(Number(h), h);
    return h;
  };
  swap(AbortSignal, 'timeout', (ms: number) => timeoutSignal(ms, armUnrefed, realTimeout)); // real-time: allowed (the fake clock's setTimeout)
  try {
    const outcomes: Array<{ ok: true; value: T } | { ok: false; error: unknown } | undefined> = starts.map(() => undefined);
    starts.forEach((start, i) => {
      let p: Promise<T>;
      try {
        p = tracked ? computation.run(i, () => start(bridge)) : start(bridge);
      } catch (e) {
        p = Promise.reject(e);
      }
      p.then((value) => (outcomes[i] = { ok: true, value }), (error) => (outcomes[i] = { ok: false, error }));
    });
    /** The earliest stop time of a computation still running (undefined: none is due to stop). */
    const nextStop = (): number | undefined => {
      let min: number | undefined;
      outcomes.forEach((o, i) => {
        const at = stop?.atMs[i];
        if (o === undefined && at !== undefined && (min === undefined || at < min)) min = at;
      });
      return min;
    };
    for (let round = 0; ; round++) {
      await settle();
      // Held work ends in host turns, not in virtual time: wait for it here, before time may move.
      while (held.size > 0) {
        await Promise.all([...held]);
        await settle();
      }
      // After its promise chains had their chance to settle at this instant: one still running past its stop time is let go.
      outcomes.forEach((o, i) => {
        const at = stop?.atMs[i];
        if (o !== undefined || at === undefined || kernel.now < at) return;
        outcomes[i] = { ok: false, error: new ClientStoppedError(kernel.now) };
        stop!.onStop?.(i, kernel.now);
      });
      if (outcomes.every((o) => o !== undefined)) {
        // Settled: what the code left keeping its process alive runs on, up to the bound (afterSettledUntilMs).
        const until = hooks.afterSettledUntilMs;
        if (until === undefined || kernel.now >= until) break;
        if (bridge.inFlight === 0 && deliveries.length === 0 && !refedTimerBy(clock, epochMs, handles, until)) break;
      }
      if (round >= roundsMax) throw new ClientStuckError(`it never settles: ${roundsMax} rounds of timers and answers by t=${kernel.now} ms (a timer that keeps re-arming?)`);
      const timer = earliestTimer(clock, epochMs);
      // After every computation settled, nothing is due to stop: the bound of the run-on is.
      const settled = outcomes.every((o) => o !== undefined);
      const due = settled ? hooks.afterSettledUntilMs : nextStop();
      // Wake at a stop time that comes before any timer, so a client waiting past its deadline on a request is let go then.
      const next = due !== undefined && (timer === undefined || due < timer) ? due : timer;
      // Stuck is judged on the client's own timers: a stop time is retrysim's, not something the code waits on.
      if (timer === undefined && bridge.inFlight === 0 && deliveries.length === 0) {
        throw new ClientStuckError('the client is waiting, but on neither a timer nor a request (real I/O, a host callback outside the fake clock, or a promise nobody resolves); it cannot run on virtual time');
      }
      if (deliveries.length === 0) {
        if (next === undefined) await wake.wait();
        else await wake.waitFor(Math.max(0, next - kernel.now));
      }
      wake = kernel.future<void>();
      // The fake clock moves in whole ms and reads floor(kernel time), as a
      // millisecond clock would. (Ticking by `kernel.now - clock.now` added
      // the kernel's fraction again every round — fake-timers keeps it apart
      // from its whole-ms `now` — and ran the client's clock up to 1 ms ahead:
      // a client that waited exactly Retry-After looked 1 ms early.)
      // tick(0) fires timers already due (a setTimeout(f, 0) armed this round).
      // The epoch is added after the floor (as the kernel clock does): whole ms of kernel time, on the epoch.
      clock.tick(Math.max(0, Math.floor(kernel.now) + epochMs - clock.now)); // due timers first (an abort wins a tie)
      for (const d of deliveries.splice(0)) d();
    }
    return outcomes as Array<{ ok: true; value: T } | { ok: false; error: unknown }>;
  } finally {
    releaseBridge();
  }
}
