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

/** The replacement of `net.Server.prototype.listen` while an instance is entered: `[object, key, replacement]`. */
export function noListenSwap(): [object, PropertyKey, unknown] {
  const refuse = function (this: unknown, ...args: unknown[]): never {
    const e = new AppListensError(portOf(args));
    // The stack starts at the app's call (its file and line), not here.
    Error.captureStackTrace(e, refuse);
    throw e;
  };
  return [net.Server.prototype, 'listen', refuse];
}
