import type { Kernel } from '../sim/kernel.js';
import type { Transport, WireOutcome } from '../harness/transport.js';
import type { TrackerRequest } from '../tracker/messages.js';
import type { ClientBridge } from './bridge.js';

/** The simulated service's origin: `op.url` is under it, and the client's requests to it (through the fetch it is handed or the global one) reach the simulation. */
export const SIM_ORIGIN = 'http://service.sim';

/** One request a client sent through the simulated fetch. */
export interface SentRequest {
  /** Virtual time it was sent. */
  atMs: number;
  method: string;
  path: string;
  /** The Idempotency-Key header, if any. */
  key: string | undefined;
  body: string;
  /** What came back: an HTTP status, a transport failure, or `aborted` (the client gave up on it in flight; a fetch whose signal had aborted before the call sends nothing and is not recorded). */
  outcome?: number | 'connection_closed' | 'connection_refused' | 'timeout' | 'aborted';
  /** The answer's body, when one came back. */
  answer?: string;
  /** Virtual time the answer (or the transport failure) reached the client. */
  answeredAtMs?: number;
  /** The answer's headers (lower-case names), when one came back: a service's `operation.resultId` may read the id from one. */
  headers?: Readonly<Record<string, string>>;
  /** The answer's `Retry-After` header, when it had one. */
  retryAfter?: string;
  /** The answer came from a fault of the simulated network (throttle, answer), not from the service. */
  injected?: true;
  /** Virtual time the client gave up on it (outcome `aborted`): when its own timeout, say, fired (`backoff` measures the wait from there). */
  abortedAtMs?: number;
}

/** How long the wire waits for an answer; the client's own AbortSignal is what gives up earlier. */
const WIRE_WAIT_MS = 600_000;

const CODES: Record<string, string> = { connection_closed: 'ECONNRESET', connection_refused: 'ECONNREFUSED', timeout: 'ETIMEDOUT' };

function headerRecord(h: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(h).forEach((v, k) => (out[k] = v));
  return out;
}

/**
 * A `fetch` whose requests travel the simulated network: each call is a
 * kernel task that sends the request and waits for the answer, so lost
 * answers, resets, a killed or refusing server, slow and paused requests and
 * the scheduler's interleavings all reach the client as they would over
 * HTTP. A transport failure rejects with a `TypeError('fetch failed')`
 * whose `cause.code` is ECONNRESET / ECONNREFUSED, as Node's fetch does; an
 * `AbortSignal` (from `AbortController` + `setTimeout`, or
 * `AbortSignal.timeout`, both on virtual time) rejects with its reason and
 * abandons the request (the server may still finish it). Every request is
 * appended to `sent`.
 */
export function simFetch(kernel: Kernel, transport: Transport, bridge: ClientBridge, actor: string, sent: SentRequest[]): typeof globalThis.fetch {
  let n = 0;
  const send = (input: Parameters<typeof fetch>[0], init: RequestInit, text: string | undefined) => new Promise<Response>((resolve, reject) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url, SIM_ORIGIN);
    const headers = headerRecord(init.headers);
    const body = text ?? (typeof init.body === 'string' ? init.body : '');
    const req: TrackerRequest = { method: (init.method ?? 'GET').toUpperCase(), path: url.pathname + url.search, headers, body };
    const rec: SentRequest = { atMs: kernel.now, method: req.method, path: req.path, key: headers['idempotency-key'], body };
    const signal = init.signal ?? undefined;
    // A signal that has already aborted stops fetch before anything leaves (it rejects with the reason):
    // no request, so nothing to record. Recorded, such a call (one AbortSignal.timeout shared by every
    // retry, spent) passed `progress` with nothing sent and broke `retry-after` with a request no server saw.
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    sent.push(rec);
    let settled = false;
    const task = `${actor}.fetch${++n}`;
    const onAbort = () => {
      if (settled) return;
      settled = true;
      rec.outcome = 'aborted';
      rec.abortedAtMs = kernel.now;
      // Shown, never hashed (no recorded run's hash moves), and without touching the run's last-event time: the
      // timeline had no line where the client gave up, and its answer's 'done' later read as received.
      kernel.trace?.note(kernel.now, task, 'aborted (the client gave up on it; an answer that comes later is not read)');
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    bridge.inFlight++;
    kernel.spawn(task, async () => {
      const out: WireOutcome = await transport.send(req, WIRE_WAIT_MS);
      bridge.inFlight--;
      bridge.deliver(() => {
        signal?.removeEventListener('abort', onAbort);
        if (settled) return;
        settled = true;
        rec.answeredAtMs = kernel.now;
        if (out.kind === 'response') {
          rec.outcome = out.status;
          rec.answer = out.body;
          rec.headers = out.headers;
          const ra = out.headers['retry-after'];
          if (ra !== undefined) rec.retryAfter = ra;
          if (out.injected === true) rec.injected = true;
          resolve(new Response(out.status === 204 || out.status === 304 ? null : out.body, { status: out.status, headers: out.headers }));
        } else {
          rec.outcome = out.reason;
          reject(new TypeError('fetch failed', { cause: Object.assign(new Error(`${out.reason} (simulated)`), { code: CODES[out.reason] }) }));
        }
      });
    });
  });
  return (input, init = {}) => {
    // The common case, a URL and a string (or no) body, goes on the wire at once.
    if (!(input instanceof Request) && (init.body == null || typeof init.body === 'string')) return send(input, init, undefined);
    // A Request, or a body of bytes, a Blob, URLSearchParams or FormData: read
    // as fetch would (method, headers and body from the Request unless init
    // overrides them; the body's bytes as text). It used to be read from init
    // alone: a Request went out as a bodiless GET without its key, a
    // Uint8Array as "123,34,…".
    let request: Request;
    try {
      request = new Request(input instanceof Request ? input : new URL(input instanceof URL ? input.href : input, SIM_ORIGIN), init);
    } catch (e) {
      return Promise.reject(e);
    }
    const signal = init.signal ?? (input instanceof Request ? input.signal : undefined);
    const read = request.body === null ? Promise.resolve('') : request.text();
    bridge.hold(read);
    return read.then((text) => {
      const headers: Record<string, string> = {};
      request.headers.forEach((v, k) => (headers[k] = v));
      return send(request.url, { method: request.method, headers, ...(signal ? { signal } : {}) }, text);
    });
  };
}
