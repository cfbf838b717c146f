/**
 * What `app()` returned when it is not a Node `(req, res)` listener, in one
 * line that says what to return instead. Users bring frameworks the host
 * never names: a Koa app, a Fastify instance, a Hono app (or its `fetch`),
 * an `http.Server`. Each has a listener one call away, and the generic
 * "got object" left them guessing — or, for a fetch-style handler passed
 * as the listener, read as an app that waits on real I/O.
 */

type Obj = Record<string, unknown>;

const fn = (o: Obj, k: string): boolean => typeof o[k] === 'function';

/** One line for a value `app()` returned that is not a function: which framework it looks like and what to return. */
export function notAListenerText(v: unknown): string {
  const head = 'app() must return a Node request listener (req, res) => ...';
  if (typeof v !== 'object' || v === null) return `${head}, got ${v === null ? 'null' : typeof v}`;
  const o = v as Obj;
  if (fn(o, 'callback') && fn(o, 'use')) return `${head}, got a Koa application: return app.callback()`;
  if (fn(o, 'routing') && fn(o, 'ready') && fn(o, 'inject')) return `${head}, got a Fastify instance: await app.ready(), then return app.routing`;
  if (fn(o, 'listeners') && fn(o, 'listen')) return `${head}, got an http.Server: return the function you pass to createServer() (or server.listeners('request')[0]), and do not listen()`;
  if (fn(o, 'fetch')) return `${head}, got an object with fetch() (a fetch-API app, such as Hono's): wrap it as a Node listener, e.g. getRequestListener(app.fetch) from @hono/node-server`;
  return `${head}, got an object with no such listener (keys: ${Object.keys(o).slice(0, 6).join(', ') || 'none'})`;
}

/** Whether a listener's return value is a fetch API `Response` (what a fetch-style handler answers with, writing nothing to `res`). */
export function isFetchResponse(v: unknown): boolean {
  return typeof Response === 'function' && v instanceof Response;
}

/** The line for a listener that answered with a `Response` instead of writing to `res`. */
/** A listener that, called with (req, res), answered nothing and returned a function: a factory handed over as the listener. */
export const FACTORY_AS_LISTENER_TEXT =
  "app() returned a function that, called with (req, res), answered nothing and returned a function: a factory, not the listener (app: async (env) => createApp where createApp(env) was meant, or the express module itself instead of express()); return the (req, res) listener the factory builds";

export const FETCH_HANDLER_TEXT =
  'app() returned a fetch-style handler (it answered with a Response object and wrote nothing to res): wrap it as a Node (req, res) listener, e.g. getRequestListener(app.fetch) from @hono/node-server';

/**
 * A hint for an error that escaped the listener while a request was being
 * delivered. Fastify handles every error of a ready app itself (a 500), so
 * one thrown from inside Fastify's own files is its router run before
 * `app.ready()`: `TypeError: Cannot read properties of undefined (reading
 * 'length')` in its hooks, which names nothing the user wrote.
 */
export function deliveryHint(e: unknown): string {
  const stack = e instanceof Error ? e.stack ?? '' : '';
  return /[\\/]node_modules[\\/]fastify[\\/]/.test(stack.split('\n').slice(1, 4).join('\n'))
    ? ' (thrown inside Fastify: app() must await app.ready() before it returns app.routing)'
    : '';
}
