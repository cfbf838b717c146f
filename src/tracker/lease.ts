/**
 * The lease rule of SPEC §3: a lease must outlast a client's whole wait
 * (its timeout) plus the longest processing time, or a live slow request can
 * be taken over while its client still waits for it.
 */

/** Default lease: 5 s. */
export const DEFAULT_LEASE_MS = 5000;
/** Default client timeout: 2 s. */
export const DEFAULT_CLIENT_TIMEOUT_MS = 2000;

/** The numbers the lease rule relates. */
export interface LeaseConfig {
  leaseMs: number;
  clientTimeoutMs: number;
  /** Longest processing time: max(slowMs, maxProcessingMs). */
  processingMs: number;
}

/** The violation as a sentence naming the numbers, or null when the lease is safe. */
export function leaseProblem(c: LeaseConfig): string | null {
  const needMs = c.clientTimeoutMs + c.processingMs;
  if (c.leaseMs > needMs) return null;
  return (
    `lease ${c.leaseMs} ms must exceed client timeout ${c.clientTimeoutMs} ms + longest processing ` +
    `${c.processingMs} ms = ${needMs} ms, or a live slow request can be taken over; raise leaseMs above ` +
    `${needMs}, or pass allowUnsafeLease: true to build this mis-configuration on purpose (simulation only)`
  );
}

/** Throws an Error with {@link leaseProblem}'s message when the lease is unsafe. */
export function assertLease(c: LeaseConfig): void {
  for (const [name, v] of Object.entries(c)) {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`${name} must be a non-negative number, got ${v}`);
  }
  const problem = leaseProblem(c);
  if (problem) throw new Error(problem);
}
