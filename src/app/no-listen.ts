import net from 'node:net';

/**
 * A hosted app does not listen: retrysim hands each request to the
 * listener `app()` returns. A factory that also calls `listen(PORT)` — an
 * `index.js` habit, `app.listen(3000)` in `createApp` — bound a real port
 * from inside the simulation, once per simulated process: the second
 * process's `listen` failed with EADDRINUSE as an unhandled 'error' event,
 * and `check --app` died with Node's stack (exit 1). While an instance is
 * entered, `net.Server.prototype.listen` (http's, Express's and Fastify's
 * servers inherit it) throws this instead, which the host names in one line.
 */
export class AppListensError extends Error {
  constructor(port: string) {
    super(`called listen(${port}) on a real server: retrysim delivers each request to the listener app() returns, and a real port per simulated process would collide (EADDRINUSE); return the listener without listening, and call listen() in your server's entry point`);
    this.name = 'AppListensError';
  }
}

/** The port (or path) a `listen` call names, for the message. */
function portOf(args: unknown[]): string {
  const a = args[0];
  if (typeof a === 'number' || typeof a === 'string') return String(a);
  if (typeof a === 'object' && a !== null) {
    const o = a as { port?: unknown; path?: unknown };
    if (o.port !== undefined) return String(o.port);
    if (o.path !== undefined) return String(o.path);
  }
  return '';
}

/** User modules loading now (their top level running): see {@link loadingUserModule}. */
let loading = 0;

/**
 * Runs `load` (the import of a user's module, once or afresh per simulated
 * process) with `listen` not binding: an app file written as its own entry
 * point ends in `app.listen(3000)` at its top level, which bound a real port
 * while retrysim loaded it (until 2026-12), and the next load — the fresh
 * process replaying a counterexample, or one load per simulated process —
 * died of EADDRINUSE as an unhandled 'error' event. retrysim delivers the
 * requests to the listener app() returns, so the top level's server is left
 * unbound: its callback and 'listening' event come as they would, its
 * `address()` answers the address it asked for, and `close()` closes it.
 */
export async function loadingUserModule<T>(load: () => Promise<T>): Promise<T> {
  installListenDispatcher();
  loading++;
  try {
    return await load();
  } finally {
    loading--;
  }
}

/** Makes `server` look as if `listen(...args)` had bound it, binding nothing. */
function listenUnbound(server: net.Server, args: unknown[]): net.Server {
  const cb = args.find((a) => typeof a === 'function') as (() => void) | undefined;
  const a = args[0];
  const o = (typeof a === 'object' && a !== null ? a : {}) as { port?: unknown; host?: unknown; path?: unknown };
  const path = typeof a === 'string' && !/^\d+$/.test(a) ? a : typeof o.path === 'string' ? o.path : undefined;
  const port = Number(typeof a === 'number' || typeof a === 'string' ? a : o.port ?? 0) || 0;
  const host = typeof args[1] === 'string' ? args[1] : typeof o.host === 'string' ? o.host : '::';
  const address = path ?? { address: host, family: host.includes(':') ? 'IPv6' : 'IPv4', port };
  let open = true;
  Object.defineProperty(server, 'listening', { get: () => open, configurable: true });
  Object.defineProperty(server, 'address', { value: () => (open ? address : null), configurable: true, writable: true });
  Object.defineProperty(server, 'close', {
    value(done?: (e?: Error) => void) {
      open = false;
      if (typeof done === 'function') server.once('close', done);
      process.nextTick(() => server.emit('close'));
      return server;
    },
    configurable: true,
    writable: true,
  });
  if (cb !== undefined) server.once('listening', cb);
  process.nextTick(() => server.emit('listening'));
  return server;
}

let dispatcherInstalled = false;

/** `net.Server.prototype.listen` (http's, Express's and Fastify's servers inherit it) binds nothing while a user module loads. */
function installListenDispatcher(): void {
  if (dispatcherInstalled) return;
  dispatcherInstalled = true;
  const real = net.Server.prototype.listen;
  const listen = function (this: net.Server, ...args: unknown[]): net.Server {
    return loading > 0 ? listenUnbound(this, args) : (Reflect.apply(real, this, args) as net.Server);
  };
  Object.defineProperty(net.Server.prototype, 'listen', { value: listen, configurable: true, writable: true });
}

/** The replacement of `net.Server.prototype.listen` while an instance is entered: `[object, key, replacement]`. */
export function noListenSwap(): [object, PropertyKey, unknown] {
  const refuse = function (this: net.Server, ...args: unknown[]): net.Server {
    // A module's top level loading afresh inside the simulated process: its entry point's listen, not the factory's.
    if (loading > 0) return listenUnbound(this, args);
    const e = new AppListensError(portOf(args));
    // The stack starts at the app's call (its file and line), not here.
    Error.captureStackTrace(e, refuse);
    throw e;
  };
  return [net.Server.prototype, 'listen', refuse];
}
