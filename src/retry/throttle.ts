/**
 * What the retry loop asks before each retry, implemented by the
 * {@link RetryBudget} (a ratio over a sliding window) and the
 * {@link TokenBucket} (AWS SDK style). Time always comes from the caller in
 * virtual ms; an implementation never reads a clock.
 */
import type { RetryBudget } from './budget.js';
import type { TokenBucket } from './token-bucket.js';

/** The answer to {@link RetryThrottle.tryRetry}. */
export type RetryGrant = { readonly granted: true; readonly cost: number } | { readonly granted: false; readonly reason: string };

/** Why an attempt failed, for throttles that price failures differently (AWS charges more for a timeout). */
export type FailureKind = 'error' | 'timeout';

/**
 * A shared limit on retries across many logical calls (one per client or
 * per layer, not per call).
 */
export interface RetryThrottle {
  /** A short name for tables, e.g. `retry budget 10 %`. */
  readonly name: string;
  /** A first attempt is being sent at `nowMs`. */
  onFirstAttempt(nowMs: number): void;
  /**
   * Asks for one retry at `nowMs`. A granted retry is accounted at once —
   * before the caller's backoff sleep — so concurrent callers sleeping at
   * the same time cannot all be granted against the same headroom.
   */
  tryRetry(nowMs: number, kind?: FailureKind): RetryGrant;
  /** An attempt succeeded at `nowMs`; `retryCostPaid` is the granted cost if it was a retry, else 0. */
  onSuccess(nowMs: number, retryCostPaid: number): void;
}

/** Checks that caller-supplied time never runs backwards; shared by both throttles. */
export function checkTime(owner: string, lastMs: number, nowMs: number): void {
  if (!(nowMs >= lastMs) || !Number.isFinite(nowMs)) {
    throw new RangeError(`${owner}: time must be finite and never decrease, got ${nowMs} after ${lastMs}`);
  }
}
