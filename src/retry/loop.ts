/**
 * The retry loop of SPEC §6: before another attempt it checks three things —
 * the error is retryable, attempts are left, and deadline budget is left
 * (at least {@link MIN_ATTEMPT_MS} after the backoff) — and then asks an
 * optional shared {@link RetryThrottle}. Expected outcomes (gave up, not
 * retryable, out of time, throttled) are values, never exceptions.
 */
import { MIN_ATTEMPT_MS, type RetryDecision } from './classify.js';
import type { FailureKind, RetryThrottle } from './throttle.js';

/** One attempt's outcome, as the caller's `attempt` function reports it. */
export type AttemptResult<T, E> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: E; readonly kind?: FailureKind };

/** Why a loop stopped without success. */
export type StopReason = 'not-retryable' | 'attempts-exhausted' | 'deadline' | 'throttled';

/** Input of {@link decideRetry}: everything the three checks look at. */
export interface RetryCheckInput {
  /** The classifier's verdict on the failure. */
  readonly decision: RetryDecision;
  /** Attempts made so far, including the one that just failed (≥ 1). */
  readonly attemptsMade: number;
  /** All attempts allowed, including the first. */
  readonly maxAttempts: number;
  /** Deadline time left now, ms (Infinity: no deadline). */
  readonly remainingMs: number;
  /** The backoff we would sleep before the retry, ms (the decision's own delay wins). */
  readonly backoffMs: number;
  /** Least time worth starting an attempt with, ms. Default {@link MIN_ATTEMPT_MS} (50). */
  readonly minAttemptMs?: number;
}

/** The answer of {@link decideRetry}. */
export type RetryCheck = { readonly retry: true; readonly delayMs: number } | { readonly retry: false; readonly stop: Exclude<StopReason, 'throttled'>; readonly reason: string };

/**
 * The three checks, in order, as a pure function: (1) retryable, (2)
 * attempts left, (3) after sleeping the delay, at least `minAttemptMs` of
 * deadline left. A server delay in the decision replaces the backoff.
 *
 * @example
 * decideRetry({ decision: { retry: true, reason: '' }, attemptsMade: 1, maxAttempts: 3, remainingMs: 100, backoffMs: 40 })
 * // → { retry: true, delayMs: 40 }   (60 ms would be left, ≥ 50)
 */
export function decideRetry(i: RetryCheckInput): RetryCheck {
  if (!i.decision.retry) return { retry: false, stop: 'not-retryable', reason: i.decision.reason };
  if (i.attemptsMade >= i.maxAttempts) return { retry: false, stop: 'attempts-exhausted', reason: `all ${i.maxAttempts} attempts used` };
  const delayMs = i.decision.delayMs ?? i.backoffMs;
  const min = i.minAttemptMs ?? MIN_ATTEMPT_MS;
  const left = i.remainingMs - delayMs;
  if (!(left >= min)) {
    return { retry: false, stop: 'deadline', reason: `after a ${delayMs} ms wait only ${left} ms of the deadline would be left (< ${min} ms)` };
  }
  return { retry: true, delayMs };
}

/** Options of {@link retryLoop}. Time comes from the caller (`now`, `sleep`): in simulation, the kernel's. */
export interface RetryLoopOptions<T, E> {
  /** All attempts allowed, including the first (≥ 1). */
  maxAttempts: number;
  /** Absolute virtual time by which the operation must end, ms. Default Infinity (no deadline). */
  deadlineAtMs?: number;
  /** Least time worth starting an attempt with, ms. Default 50. */
  minAttemptMs?: number;
  /** The current (virtual) time, ms. */
  now(): number;
  /** Waits `ms` of (virtual) time. */
  sleep(ms: number): Promise<void>;
  /** Makes attempt `n` (1-based) with `remainingMs` of deadline left. */
  attempt(n: number, remainingMs: number): Promise<AttemptResult<T, E>>;
  /**
   * Classifies a failure. `budgetLeft` says whether at least `minAttemptMs`
   * of deadline is left now; pass it on to {@link classifyGrpc}.
   */
  classify(error: E, budgetLeft: boolean): RetryDecision;
  /** Backoff before the retry that follows `failedAttempts` failures (≥ 1), ms. */
  backoffMs(failedAttempts: number): number;
  /** A limit shared with other calls (retry budget, token bucket). Default: none. */
  throttle?: RetryThrottle;
}

/** What {@link retryLoop} returns: success, or why it stopped, with the last error. */
export type RetryLoopResult<T, E> =
  | { readonly ok: true; readonly value: T; readonly attempts: number }
  | { readonly ok: false; readonly error: E; readonly attempts: number; readonly stop: StopReason; readonly reason: string };

/**
 * Runs attempts until one succeeds or a check says stop. A retry granted by
 * the throttle is charged before the backoff sleep (see {@link RetryThrottle.tryRetry}).
 *
 * @example
 * const r = await retryLoop({
 *   maxAttempts: 3, deadlineAtMs: k.now + 2000, now: () => k.now, sleep: (ms) => k.sleep(ms),
 *   attempt: async () => call(), classify: (code, budgetLeft) => classifyGrpc(code, { budgetLeft, keyed: true }),
 *   backoffMs: (n) => bugReportHarnessPolicy.delayMs(n, rng),
 * });
 * if (!r.ok) console.log(r.stop, r.reason);
 */
export async function retryLoop<T, E>(o: RetryLoopOptions<T, E>): Promise<RetryLoopResult<T, E>> {
  if (!(Number.isInteger(o.maxAttempts) && o.maxAttempts >= 1)) throw new RangeError(`retryLoop: maxAttempts must be an integer >= 1, got ${o.maxAttempts}`);
  const deadline = o.deadlineAtMs ?? Infinity;
  const min = o.minAttemptMs ?? MIN_ATTEMPT_MS;
  const throttle = o.throttle;
  let paid = 0; // what the throttle charged for the attempt in flight (0 for a first attempt)
  throttle?.onFirstAttempt(o.now());
  for (let n = 1; ; n++) {
    const r = await o.attempt(n, deadline - o.now());
    if (r.ok) {
      throttle?.onSuccess(o.now(), paid);
      return { ok: true, value: r.value, attempts: n };
    }
    const remainingMs = deadline - o.now();
    const decision = o.classify(r.error, remainingMs >= min);
    // Draw the backoff only when it can matter, so a run's random stream
    // does not depend on failures that end the loop anyway.
    const needBackoff = decision.retry && decision.delayMs === undefined && n < o.maxAttempts;
    const check = decideRetry({ decision, attemptsMade: n, maxAttempts: o.maxAttempts, remainingMs, backoffMs: needBackoff ? o.backoffMs(n) : 0, minAttemptMs: min });
    if (!check.retry) return { ok: false, error: r.error, attempts: n, stop: check.stop, reason: check.reason };
    if (throttle !== undefined) {
      const g = throttle.tryRetry(o.now(), r.kind);
      if (!g.granted) return { ok: false, error: r.error, attempts: n, stop: 'throttled', reason: g.reason };
      paid = g.cost;
    }
    if (check.delayMs > 0) await o.sleep(check.delayMs);
  }
}
