import { request } from 'node:http';
import { Prng } from '../random/prng.js';
import type { ClientEnv } from '../harness/client.js';
import type { Transport, TransportFailure, WireOutcome } from '../harness/transport.js';
import type { TrackerRequest } from '../tracker/messages.js';

/**
 * The real side of the harness's `Transport`: one HTTP request over node:http
 * with a hard per-attempt timeout. Every attempt uses a fresh connection
 * (`agent: false`), as a crashed server would otherwise leave pooled sockets
 * behind that fail in ways unrelated to the request being sent.
 */

/** Where the requests go: a fixed port, or several (round-robin, like the simulated load balancer). */
export type PortSource = number | (() => number);

function failureOf(err: NodeJS.ErrnoException): TransportFailure {
  if (err.code === 'ECONNREFUSED') return 'connection_refused';
  return 'connection_closed'; // ECONNRESET, "socket hang up", EPIPE: the peer went away
}

/**
 * Sends one request and maps the result onto the harness's outcomes:
 * refused (no server), closed (no byte of response), timeout, or a response.
 */
export function httpSend(port: number, req: TrackerRequest, timeoutMs: number, host = '127.0.0.1'): Promise<WireOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (o: WireOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const body = Buffer.from(req.body, 'utf8');
    const headers: Record<string, string | number> = {};
    // Header values go out as UTF-8 bytes (node writes a string's chars as
    // Latin-1 and refuses anything beyond); the server reads them as UTF-8.
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) headers[k] = Buffer.from(v, 'utf8').toString('latin1');
    if (req.method !== 'GET' || body.length > 0) headers['content-length'] = body.length;
    const r = request({ host, port, method: req.method, path: req.path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
        done({ kind: 'response', status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', () => done({ kind: 'transport_error', reason: 'connection_closed' }));
      res.on('aborted', () => done({ kind: 'transport_error', reason: 'connection_closed' }));
    });
    const timer = setTimeout(() => {
      done({ kind: 'transport_error', reason: 'timeout' });
      r.destroy();
    }, timeoutMs);
    r.on('error', (e: NodeJS.ErrnoException) => done({ kind: 'transport_error', reason: failureOf(e) }));
    r.end(body);
  });
}

/**
 * A harness transport to one port, or round-robin over several.
 *
 * @example
 * const t = httpTransport(server.port);
 * await submitReport(intent, 'toolu_1', t, realClientEnv(1), { keySource: 'tool_call' }, log);
 */
export function httpTransport(ports: PortSource | readonly number[], host = '127.0.0.1'): Transport {
  let n = 0;
  const pick =
    typeof ports === 'number' ? () => ports : typeof ports === 'function' ? ports : () => (ports as readonly number[])[n++ % ports.length]!;
  return { send: (req, timeoutMs) => httpSend(pick(), req, timeoutMs, host) };
}

/** A GET (or any request) that resolves with status and parsed JSON; throws on transport failure. */
export async function httpJson(port: number, method: string, path: string, body?: unknown, timeoutMs = 5000): Promise<{ status: number; json: unknown }> {
  const o = await httpSend(port, {
    method,
    path,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? '' : JSON.stringify(body),
  }, timeoutMs);
  if (o.kind !== 'response') throw new Error(`${method} ${path} on port ${port}: ${o.reason}`);
  let json: unknown;
  try {
    json = JSON.parse(o.body);
  } catch {
    json = o.body;
  }
  return { status: o.status, json };
}

/**
 * The real-mode client environment: wall clock, real timers, and a seeded
 * generator for jitter and per-attempt keys (so a real run draws the same
 * backoff sequence as a simulated one with the same seed).
 */
export function realClientEnv(seedOrRng: number | Prng): ClientEnv {
  return {
    now: () => Date.now(),
    sleep: (ms) => new Promise<void>((r) => setTimeout(r, ms)),
    rng: typeof seedOrRng === 'number' ? new Prng(seedOrRng) : seedOrRng,
  };
}

/** Real sleep. */
export function sleepMs(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
