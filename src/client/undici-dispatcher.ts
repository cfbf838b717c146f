/**
 * undici's global dispatcher, refused while a bridged client run is active.
 *
 * The `undici` package's `fetch` and `request` (a client that imports them
 * for pooling or the newer API) and Node's own fetch held from before
 * retrysim loaded all send through the one dispatcher undici keeps at
 * `globalThis[Symbol.for('undici.globalDispatcher.1')]` — not through the
 * global `fetch` the simulation routes. Their requests went to the real
 * resolver with `http://service.sim` (a real DNS query, which kept the
 * process from exiting until the resolver gave up, about 5 s after the
 * verdict), and the line blamed "Node's own fetch, a reference taken before
 * retrysim was loaded" — advice about import order that cannot help a
 * client importing undici. During a run the slot holds a dispatcher that
 * fails every request at once (the caller's handler gets the error, as for
 * a refused connection) and names it, so nothing leaves the simulation.
 * A dispatcher the client passes explicitly (`dispatcher: new Agent()`)
 * is not reached here; the bridge still sees its requests start.
 */

/** The slot undici (the package from 6 on, and Node's bundled copy) reads its global dispatcher from. */
const SLOT = Symbol.for('undici.globalDispatcher.1');

/** What undici hands a dispatcher: the parts the line names. */
interface DispatchOptions {
  origin?: string | URL;
  path?: string;
  method?: string;
}

/** The callbacks undici's handlers carry: the legacy error one (undici ≤ 7's fetch and request), or the newer one. */
interface Handler {
  onError?: (err: Error) => void;
  onResponseError?: (controller: unknown, err: Error) => void;
}

/** What `dispatch` was asked, for the line: `POST http://service.sim/reports`. */
function describe(o: DispatchOptions): string {
  const origin = o.origin === undefined ? '' : String(o.origin).replace(/\/$/, '');
  return `${(o.method ?? 'GET').toUpperCase()} ${origin}${o.path ?? '/'}`;
}

/**
 * Puts a refusing dispatcher in undici's global slot until the returned
 * function is called. `refuse(call)` notes the request and gives the error
 * its handler receives. Node's bundled undici is initialised first (it
 * installs its own Agent in the slot when it loads, unless one is there), so
 * that the Agent put back afterwards is the one real requests need.
 */
export function refuseUndiciDispatcher(refuse: (call: string) => Error): () => void {
  const g = globalThis as unknown as Record<symbol, unknown>;
  // Node's undici loads on first use of a fetch class; loaded later, during the run, it would find this
  // dispatcher, keep it, and have none once it is taken away.
  if (g[SLOT] === undefined && typeof Response === 'function') new Response('');
  const had = Object.getOwnPropertyDescriptor(g, SLOT);
  if (had !== undefined && had.writable !== true) return () => {};
  const refusing = {
    dispatch(opts: DispatchOptions, handler: Handler): boolean {
      const err = refuse(describe(opts));
      // Asynchronously, as a refused connection is reported: the caller has not finished setting up.
      queueMicrotask(() => {
        if (typeof handler.onError === 'function') handler.onError(err);
        else handler.onResponseError?.({ abort() {} }, err);
      });
      return true;
    },
    close: async () => {},
    destroy: async () => {},
    on() { return this; },
    once() { return this; },
    off() { return this; },
    removeListener() { return this; },
    emit: () => false,
  };
  if (had === undefined) Object.defineProperty(g, SLOT, { value: refusing, writable: true, configurable: true });
  else g[SLOT] = refusing;
  return () => {
    if (g[SLOT] !== refusing) return; // set again during the run (setGlobalDispatcher): that one stays
    if (had === undefined) delete g[SLOT];
    else g[SLOT] = had.value;
  };
}
