import { checkTime, type FailureKind, type RetryGrant, type RetryThrottle } from './throttle.js';

/** Options of a {@link TokenBucket}; the defaults are the AWS SDKs' "standard" retry mode. */
export interface TokenBucketOptions {
  /** Tokens when full (and at start). Default 500. */
  capacity?: number;
  /** Tokens a retry after an error costs. Default 5. */
  retryCost?: number;
  /** Tokens a retry after a timeout costs. Default 10. */
  timeoutRetryCost?: number;
  /** Tokens a success on the first attempt adds. Default 1. */
  noRetryIncrement?: number;
  /** Tokens added per second of virtual time (AWS standard mode: 0, the bucket refills only through successes). */
  refillPerSecond?: number;
  /**
   * When the bucket cannot pay, still grant one retry per this many ms (a
   * fixed slow rate) instead of none. Default undefined: retries stop.
   */
  slowRetryIntervalMs?: number;
}

/**
 * A retry token bucket, AWS SDK style (SPEC §6): a retry costs tokens
 * (`retryCost`, or `timeoutRetryCost` after a timeout); a success refunds
 * what its retry cost, or adds `noRetryIncrement` if it was a first attempt;
 * the balance never exceeds `capacity`. When the bucket cannot pay, retries
 * stop — or, with `slowRetryIntervalMs`, fall to one per interval.
 *
 * Bound: with no successes, no refill and no slow rate, the bucket grants at
 * most `floor(capacity / retryCost)` retries in total (100 with the
 * defaults), however many calls share it.
 *
 * @example
 * const b = new TokenBucket();        // 500 tokens, 5 per retry
 * const g = b.tryRetry(0);            // { granted: true, cost: 5 }, 495 left
 * b.onSuccess(10, g.granted ? g.cost : 0); // refunds the 5
 */
export class TokenBucket implements RetryThrottle {
  readonly name: string;
  readonly capacity: number;
  readonly retryCost: number;
  readonly timeoutRetryCost: number;
  readonly noRetryIncrement: number;
  readonly refillPerSecond: number;
  readonly slowRetryIntervalMs: number | undefined;
  private balance: number;
  private lastMs = -Infinity;
  private lastSlowMs = -Infinity;

  constructor(opts: TokenBucketOptions = {}) {
    this.capacity = opts.capacity ?? 500;
    this.retryCost = opts.retryCost ?? 5;
    this.timeoutRetryCost = opts.timeoutRetryCost ?? 10;
    this.noRetryIncrement = opts.noRetryIncrement ?? 1;
    this.refillPerSecond = opts.refillPerSecond ?? 0;
    this.slowRetryIntervalMs = opts.slowRetryIntervalMs;
    for (const [k, v] of Object.entries({ capacity: this.capacity, retryCost: this.retryCost, timeoutRetryCost: this.timeoutRetryCost, noRetryIncrement: this.noRetryIncrement, refillPerSecond: this.refillPerSecond })) {
      if (!(v >= 0 && Number.isFinite(v))) throw new RangeError(`TokenBucket: ${k} must be finite and >= 0, got ${v}`);
    }
    if (this.slowRetryIntervalMs !== undefined && !(this.slowRetryIntervalMs > 0)) {
      throw new RangeError(`TokenBucket: slowRetryIntervalMs must be > 0, got ${this.slowRetryIntervalMs}`);
    }
    this.balance = this.capacity;
    this.name = `token bucket ${this.capacity}/${this.retryCost}`;
  }

  /** Tokens available at `nowMs` (after any refill). */
  tokens(nowMs: number): number {
    this.advance(nowMs);
    return this.balance;
  }

  /** A first attempt costs nothing. */
  onFirstAttempt(nowMs: number): void {
    this.advance(nowMs);
  }

  /** Takes the retry's cost if the bucket can pay; else the slow rate, if configured, may grant one for free. */
  tryRetry(nowMs: number, kind: FailureKind = 'error'): RetryGrant {
    this.advance(nowMs);
    const cost = kind === 'timeout' ? this.timeoutRetryCost : this.retryCost;
    if (this.balance >= cost) {
      this.balance -= cost;
      return { granted: true, cost };
    }
    const slow = this.slowRetryIntervalMs;
    if (slow !== undefined && nowMs - this.lastSlowMs >= slow) {
      this.lastSlowMs = nowMs;
      return { granted: true, cost: 0 };
    }
    return { granted: false, reason: `token bucket empty: ${this.balance} tokens, a retry costs ${cost}` };
  }

  /** Refunds `retryCostPaid` (or adds `noRetryIncrement` for a first-attempt success), capped at capacity. */
  onSuccess(nowMs: number, retryCostPaid: number): void {
    this.advance(nowMs);
    const add = retryCostPaid > 0 ? retryCostPaid : this.noRetryIncrement;
    this.balance = Math.min(this.capacity, this.balance + add);
  }

  private advance(nowMs: number): void {
    checkTime('TokenBucket', this.lastMs, nowMs);
    if (this.refillPerSecond > 0 && this.lastMs > -Infinity) {
      this.balance = Math.min(this.capacity, this.balance + ((nowMs - this.lastMs) * this.refillPerSecond) / 1000);
    }
    this.lastMs = nowMs;
  }
}
