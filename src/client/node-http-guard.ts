import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';

/**
 * `node:http` and `node:https` requests refused while a bridged client run
 * is active. The simulation carries `fetch` only; a client whose library
 * sends through Node's http module — axios's default adapter in Node, got,
 * node-fetch — went to the real resolver with `http://service.sim`, failed
 * in real time, and its campaign "failed `progress`" (the client sent
 * nothing the simulation saw) with a counterexample that was about DNS, not
 * about the client. Now such a call throws at once and the run names it
 * (exit 2, one line saying to use fetch).
 *
 * The module functions are replaced once per process, at import (before any
 * user module loads), by dispatchers that call the real ones outside a run;
 * ESM named imports follow after one sync, as for node:timers.
 */
type Guard = (call: string) => Error;

let guard: Guard | undefined;
let installed = false;

/** What a request's arguments name, for the line: `POST http://service.sim/reports`. */
function describe(args: unknown[], protocol: string): string {
  const [a, b] = args;
  const o = (typeof a === 'object' && a !== null && !(a instanceof URL) ? a : typeof b === 'object' && b !== null ? b : {}) as http.RequestOptions;
  const method = (o.method ?? 'GET').toUpperCase();
  if (typeof a === 'string' || a instanceof URL) return `${method} ${String(a)}`;
  const host = o.hostname ?? o.host ?? 'localhost';
  // axios's adapter passes `port: ''` for a URL without one.
  return `${method} ${o.protocol ?? protocol}//${host}${o.port ? `:${o.port}` : ''}${o.path ?? '/'}`;
}

/** Puts the dispatchers on node:http and node:https (once). */
export function installNodeHttpGuard(): void {
  if (installed) return;
  installed = true;
  for (const [mod, protocol] of [[http, 'http:'], [https, 'https:']] as const) {
    const m = mod as unknown as Record<'request' | 'get', (...a: unknown[]) => unknown>;
    for (const k of ['request', 'get'] as const) {
      const real = m[k];
      m[k] = function (this: unknown, ...a: unknown[]) {
        if (guard !== undefined) throw guard(describe(a, protocol));
        return Reflect.apply(real, this, a);
      };
    }
  }
  syncBuiltinESMExports();
}

/** Refuses node:http(s) requests from now on, with the error `g` makes (it also notes the call); undefined: real again. */
export function guardNodeHttp(g: Guard | undefined): void {
  guard = g;
}

installNodeHttpGuard();
