import type { TrackerRequest } from '../tracker/messages.js';

/** Why an attempt got no HTTP answer. All of them are retried by the harness. */
export type TransportFailure =
  /** no response before the client's timeout */
  | 'timeout'
  /** the server closed the connection without a byte (lost response, kill) */
  | 'connection_closed'
  /** nobody listening (the server process is down) */
  | 'connection_refused';

/** What one attempt on the wire ended with. */
export type WireOutcome =
  /** `injected`: answered by a fault of the simulated network in front of the service (throttle, answer); the handler never saw the request. */
  | { kind: 'response'; status: number; headers: Record<string, string>; body: string; injected?: true }
  | { kind: 'transport_error'; reason: TransportFailure };

/**
 * How the harness reaches the service. The simulated network and a real
 * HTTP client both implement it, so the same harness runs in both worlds.
 */
export interface Transport {
  /** Sends one request and waits at most `timeoutMs` for the answer. */
  send(req: TrackerRequest, timeoutMs: number): Promise<WireOutcome>;
}
