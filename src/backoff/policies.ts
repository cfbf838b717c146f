import type { Prng } from '../random/prng.js';
import { expoMs } from './strategies.js';

/** Extra facts a policy may use for one delay (e.g. the server's Retry-After). */
export interface RetryContext {
  /** The server's Retry-After, in ms, if the failed response carried one. */
  retryAfterMs?: number;
}

/**
 * A named real-world retry policy (SPEC §1): how many attempts, and how long
 * to wait before each retry. Every policy documents what its `n` means in
 * {@link RetryPolicy.retryNumbering} — the sources disagree, and an
 * off-by-one here doubles every delay.
 *
 * Callers that count retries from 1 go through {@link retryDelayMs}, which
 * translates to the policy's own numbering.
 *
 * @example
 * const p = bugReportHarnessPolicy;
 * for (let attempt = 1; attempt <= p.maxAttempts; attempt++) {
 *   if (await trySubmit()) break;
 *   if (attempt < p.maxAttempts) await k.sleep(retryDelayMs(p, attempt, rng));
 * }
 */
export interface RetryPolicy {
  readonly name: string;
  /** All attempts, including the first. */
  readonly maxAttempts: number;
  /** Retries after the first attempt (= maxAttempts − 1). */
  readonly maxRetries: number;
  /** What `n` in {@link RetryPolicy.delayMs} counts, in a sentence. */
  readonly retryNumbering: string;
  /** Smallest `n` the policy accepts. */
  readonly nMin: number;
  /** The `n` of the first retry in this policy's numbering (default 1; the Anthropic SDK's is 0). */
  readonly firstRetryN?: number;
  /** Delay in ms before the retry numbered `n`; finite and ≥ 0 for every n ≥ nMin. */
  delayMs(n: number, rng: Prng, ctx?: RetryContext): number;
}

/**
 * The delay before retry number `retry` (1 = the first retry, after the
 * first attempt failed), whatever the policy's own numbering: passing the
 * attempt number straight to the Anthropic SDK's formula (n = retries
 * already made) would wait 1 s before its first retry instead of 0.5 s.
 */
export function retryDelayMs(policy: RetryPolicy, retry: number, rng: Prng, ctx?: RetryContext): number {
  return policy.delayMs((policy.firstRetryN ?? 1) + retry - 1, rng, ctx);
}

function checkN(policy: string, n: number, min: number): void {
  if (!Number.isInteger(n) || n < min) throw new RangeError(`${policy}: retry number must be an integer >= ${min}, got ${n}`);
}

/** Largest delay any policy returns: keeps integer-ms policies exact and finite far past any sane attempt. */
export const DELAY_MS_MAX = Number.MAX_SAFE_INTEGER;

/**
 * Codex sampling layer: `floor(floor(200 · 2^max(n−1, 0)) · U[0.9, 1.1))` ms,
 * no cap (n = 10 is about 102 s), 5 retries by default. The only guard is
 * numeric: the result saturates at {@link DELAY_MS_MAX} (reached near n = 46,
 * about 285,000 years) so it never becomes Infinity.
 */
export const codexSamplingPolicy: RetryPolicy = {
  name: 'codex-sampling',
  maxAttempts: 6,
  maxRetries: 5,
  retryNumbering: 'n is the retry number Codex passes to backoff(): 1 for the first retry; 0 is accepted and behaves like 1 (both 200 ms)',
  nMin: 0,
  delayMs(n: number, rng: Prng): number {
    checkN('codex-sampling', n, 0);
    const e = Math.min(Math.max(n - 1, 0), 1000);
    const base = Math.floor(200 * 2 ** e);
    const d = Math.floor(base * (0.9 + 0.2 * rng.next()));
    return d < DELAY_MS_MAX ? d : DELAY_MS_MAX;
  },
};

/**
 * Anthropic Python SDK 1.11.0 (`_calculate_retry_timeout`): without
 * Retry-After, `min(0.5 · 2^n, 8) s · (1 − 0.25 · U[0, 1))` — jitter only
 * shortens, by at most 25 %. With a Retry-After the server's value wins; like
 * the SDK, only values in (0, 60 s] are honoured (others fall back to the
 * formula). 2 retries (3 attempts) by default. The SDK clamps n at 1000.
 */
export const anthropicSdkPolicy: RetryPolicy = {
  name: 'anthropic-sdk-1.11',
  maxAttempts: 3,
  maxRetries: 2,
  retryNumbering: 'n is the number of retries already made (max_retries − remaining_retries): 0 before the first retry',
  nMin: 0,
  firstRetryN: 0,
  delayMs(n: number, rng: Prng, ctx?: RetryContext): number {
    checkN('anthropic-sdk-1.11', n, 0);
    const ra = ctx?.retryAfterMs;
    if (ra !== undefined && ra > 0 && ra <= 60_000) return ra;
    const nb = Math.min(n, 1000);
    const sleepS = Math.min(0.5 * 2 ** nb, 8);
    const timeoutS = sleepS * (1 - 0.25 * rng.next());
    return timeoutS >= 0 ? timeoutS * 1000 : 0;
  },
};

/**
 * Java RetryPolicy (the book's default): maxAttempts = 3 counts *all*
 * attempts; `delayAfter(failedAttempt ≥ 1) = max(0, round(min(20 ms << min(failedAttempt−1, 20), 1 s) · (1 + U[−0.2, 0.2))))`.
 * The shift is clamped at 20 so `base << shift` never overflows a Java int.
 */
export const javaRetryPolicy: RetryPolicy = {
  name: 'java-retry-policy',
  maxAttempts: 3,
  maxRetries: 2,
  retryNumbering: 'n is failedAttempt, the 1-based number of the attempt that just failed: 1 before the second attempt',
  nMin: 1,
  delayMs(n: number, rng: Prng): number {
    checkN('java-retry-policy', n, 1);
    const shifted = 20 * 2 ** Math.min(n - 1, 20); // 20 << 20 = 20,971,520 fits an int
    const d = Math.min(shifted, 1000);
    const jittered = Math.round(d * (1 + (-0.2 + 0.4 * rng.next())));
    return Math.max(0, jittered);
  },
};

/**
 * The bug-report harness (SPEC §4): Full Jitter, base 20 ms, cap 200 ms,
 * 4 attempts. `delayMs(n) = U[0, min(200, 20 · 2^n))` where n counts failed
 * attempts (the herd's convention): retry 1 waits U[0, 40), retry 2
 * U[0, 80), retry 3 U[0, 160), and from retry 4 on U[0, 200).
 */
export const bugReportHarnessPolicy: RetryPolicy = {
  name: 'bug-report-harness',
  maxAttempts: 4,
  maxRetries: 3,
  retryNumbering: 'n is the number of failed attempts so far: 1 before the second attempt (the first retry)',
  nMin: 1,
  delayMs(n: number, rng: Prng): number {
    checkN('bug-report-harness', n, 1);
    return expoMs(n, 20, 200) * rng.next();
  },
};

/** The named policies by name. */
export const NAMED_POLICIES: Readonly<Record<string, RetryPolicy>> = {
  [codexSamplingPolicy.name]: codexSamplingPolicy,
  [anthropicSdkPolicy.name]: anthropicSdkPolicy,
  [javaRetryPolicy.name]: javaRetryPolicy,
  [bugReportHarnessPolicy.name]: bugReportHarnessPolicy,
};
