import net from 'node:net';
import { noteRefusal } from './refusals.js';

/**
 * A simulated process reaches the simulated store and nothing else. An app
 * that opens a TCP connection of its own — a real Redis client created at
 * module level (`export const redis = createClient()` in `redis.ts`, the
 * usual layout) instead of the client `app({ redis })` hands it, a
 * database driver, a `fetch` to another service — reached the machine's
 * network from inside the simulation: a refused connection's 'error'
 * event, which nothing handled, ended retrysim with Node's stack (exit 1,
 * which reads as "fails"; until 2026-12), and a connection that succeeded
 * would have run on real time.
 *
 * While a simulated instance is entered, `net.Socket.prototype.connect`
 * (every TCP and TLS connection, whichever module function made it, goes
 * through it) throws before any lookup, and the host names the call in
 * one line (exit 2). A local IPC path passes: that is tooling's plumbing
 * (tsx's loader connects to its pipe when a module loads afresh in a
 * run), never a request. Real mode (`serve`) does not install this.
 */
export class AppSocketError extends Error {
  constructor(readonly target: string) {
    super(`retrysim: the app opened a TCP connection to ${target}; a simulated process reaches only the simulated store (env.redis)`);
    this.name = 'AppSocketError';
  }
}

/** The one line the host reports (after `app 'X' <where>: `). */
export function socketText(target: string): string {
  return `the app opened a TCP connection to ${target} (a real Redis or database client, or a call to another service): a simulated process reaches only the simulated store, on virtual time; give every store call to the client app({ redis }) hands the factory (env.redis) — also a client your modules create at their top level — instead of one that connects`;
}

/** Where a `connect` call goes (`127.0.0.1:6379`), or undefined for a local IPC path. */
function targetOf(args: unknown[]): string | undefined {
  // net.connect and tls.connect hand the socket their arguments normalized: [[options, cb]].
  const a = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  const [first, second] = a;
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) return `${typeof second === 'string' ? second : 'localhost'}:${first}`;
  if (typeof first !== 'object' || first === null) return undefined;
  const o = first as { host?: unknown; port?: unknown; path?: unknown };
  if (o.path !== undefined && o.port === undefined) return undefined;
  return `${typeof o.host === 'string' ? o.host : 'localhost'}:${String(o.port ?? '')}`;
}

/** The replacement of `net.Socket.prototype.connect` while a simulated instance is entered: `[object, key, replacement]`. */
export function noSocketSwap(): [object, PropertyKey, unknown] {
  const real = net.Socket.prototype.connect as (...a: unknown[]) => unknown;
  const refuse = function (this: net.Socket, ...args: unknown[]): unknown {
    const target = targetOf(args);
    if (target === undefined) return real.apply(this, args);
    noteRefusal(socketText(target));
    const e = new AppSocketError(target);
    // The stack starts at the caller (the app's or its client library's frame), not here.
    Error.captureStackTrace(e, refuse);
    throw e;
  };
  return [net.Socket.prototype, 'connect', refuse];
}
