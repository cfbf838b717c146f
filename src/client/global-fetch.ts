/**
 * The global `fetch`, made once per process (when this module is first
 * imported, before any user module loads: the CLI, the client loader and the
 * vitest helper import it first) a dispatcher that calls the fetch a bridged
 * client run routes it to, and the real one outside every run.
 *
 * The bridge also replaces `globalThis.fetch` while a run is active, but
 * production code often takes the global once, when its module loads:
 * fetch-retry's documented use is `require('fetch-retry')(fetch)` at the top
 * of the file, and `const f = globalThis.fetch` is common in wrappers. That
 * reference was the real undici fetch: its requests to `http://service.sim`
 * went to the real resolver, failed in real time as "fetch failed", and a
 * correct client came out as failing `progress` ("rejected without sending a
 * request") or refused as waiting on nothing, depending on how fast DNS
 * answered. Holding the dispatcher instead, it reaches the simulation as the
 * global does. Only a module loaded before retrysim itself keeps the real one.
 */
type Fetch = typeof globalThis.fetch;

/** The one dispatcher's state: the runtime's fetch and where it routes now. */
interface Dispatch {
  real: Fetch;
  routed: Fetch | undefined;
}
/** Where the dispatcher keeps its state, for every copy of this module to find. */
const STATE = Symbol.for('retrysim.fetchDispatcher');
let state: Dispatch | undefined;
let installed = false;

/**
 * Installs the dispatcher in place of the global fetch (once; a no-op where
 * the runtime has no fetch). A second copy of this module — the package and a
 * checkout, another loader, a client module loaded afresh per simulated
 * process with what it imports — finds the first's dispatcher and shares its
 * state: one dispatcher, never a stack of them, and the runtime's fetch under
 * it is what unroutedFetch gives (or the recording fetch would call itself).
 */
export function installFetchDispatcher(): void {
  if (installed) return;
  installed = true;
  const found = globalThis.fetch as (Fetch & { [STATE]?: Dispatch }) | undefined;
  if (typeof found !== 'function') return;
  if (found[STATE] !== undefined) {
    state = found[STATE];
    return;
  }
  const s: Dispatch = { real: found, routed: undefined };
  const dispatcher = function fetch(this: unknown, ...a: Parameters<Fetch>): ReturnType<Fetch> {
    return s.routed !== undefined ? s.routed(...a) : Reflect.apply(s.real, globalThis, a);
  };
  Object.defineProperty(dispatcher, STATE, { value: s });
  Object.defineProperty(globalThis, 'fetch', { value: dispatcher as Fetch, configurable: true, writable: true, enumerable: true });
  state = s;
}

/**
 * The runtime's own fetch, never routed: what a fetch that the dispatcher
 * routes to must call for real requests (the flakiness lab's recording fetch),
 * or it would call itself.
 */
export function unroutedFetch(): Fetch {
  return state?.real ?? globalThis.fetch;
}

/** What the dispatcher calls from now on: a bridged run's fetch (or the flakiness lab's recording one), or undefined for the real one (the run ended). */
export function routeFetchDispatcher(f: Fetch | undefined): void {
  if (state !== undefined) state.routed = f;
}

installFetchDispatcher();
