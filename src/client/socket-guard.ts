import net from 'node:net';
import tls from 'node:tls';
import { syncBuiltinESMExports } from 'node:module';

/**
 * TCP sockets refused while a bridged client run is active (IPC paths pass). undici with a
 * dispatcher of the client's own (`request(url, { dispatcher: new Agent() })`,
 * a `Pool`, a `Client`) never meets the fetch the simulation routes nor the
 * global dispatcher it refuses (src/client/undici-dispatcher.ts): until
 * 2026-12 its requests went to the real resolver for `service.sim` — a DNS
 * query leaving the machine, which kept the process from exiting until the
 * resolver gave up. Every connection undici (or any client library on raw
 * sockets) makes goes through `net.connect` or `tls.connect`, looked up on
 * the module object at call time: during a run they throw before any
 * lookup, the library hands the error to its caller as a failed connection,
 * and the run names the call.
 *
 * Replaced once per process, at import (before any user module loads), by
 * dispatchers that call the real ones outside a run; ESM named imports
 * follow after one sync, as for node:http (src/client/node-http-guard.ts).
 */
type Guard = (call: string) => Error;

let guard: Guard | undefined;
let installed = false;

/**
 * What a connect call names (`service.sim:80`), or undefined for a local
 * IPC path (a string or `{ path }`): that is tooling's plumbing — tsx's
 * loader connects to its pipe when a module loads afresh during a run, and
 * was refused as a client's socket until this skipped it — never a request.
 */
function describe(args: unknown[], defaultPort: number): string | undefined {
  const [a, b] = args;
  if (typeof a === 'number') return `${typeof b === 'string' ? b : 'localhost'}:${a}`;
  if (typeof a === 'string') return undefined;
  const o = (typeof a === 'object' && a !== null ? a : {}) as { host?: string; port?: number | string; path?: string };
  if (o.path !== undefined) return undefined;
  return `${o.host ?? 'localhost'}:${o.port ?? defaultPort}`;
}

/** Puts the dispatchers on node:net and node:tls (once). */
export function installSocketGuard(): void {
  if (installed) return;
  installed = true;
  const targets: Array<[Record<string, (...a: unknown[]) => unknown>, string, number]> = [
    [net as never, 'connect', 80], [net as never, 'createConnection', 80], [tls as never, 'connect', 443],
  ];
  for (const [m, k, port] of targets) {
    const real = m[k]!;
    m[k] = function (this: unknown, ...a: unknown[]) {
      const call = guard === undefined ? undefined : describe(a, port);
      if (call !== undefined) throw guard!(call);
      return Reflect.apply(real, this, a);
    };
  }
  syncBuiltinESMExports();
}

/** Refuses sockets from now on, with the error `g` makes (it also notes the call); undefined: real again. */
export function guardSockets(g: Guard | undefined): void {
  guard = g;
}

installSocketGuard();
