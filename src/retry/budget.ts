import { checkTime, type RetryGrant, type RetryThrottle } from './throttle.js';

/** Options of a {@link RetryBudget}. */
export interface RetryBudgetOptions {
  /** Largest share of retries among all requests in the window. Default 0.1 (10 %, SPEC §6). */
  ratio?: number;
  /** Length of the sliding window, virtual ms. Default 10,000 (Finagle's ten seconds). */
  windowMs?: number;
  /**
   * Retries allowed per window on top of the ratio, so a quiet client can
   * still retry at all. Default 0: the ratio alone, which makes the bound
   * exact (see {@link RetryBudget}).
   */
  minRetriesPerWindow?: number;
}

/** Absorbs float error in `ratio × requests` (0.1 × 30 is 3.0000000000000004, others fall just short). */
const TOLERANCE = 1e-9;

/**
 * A retry budget (SPEC §6; gRPC's retryThrottling and Finagle's RetryBudget
 * in spirit): a retry is granted only while retries stay at most `ratio` of
 * all requests (first attempts + retries) over the last `windowMs`.
 *
 * Precisely, a retry at time t is granted iff, counting it,
 * `retries(t − windowMs, t] ≤ ratio · requests(t − windowMs, t] + minRetriesPerWindow`.
 * So over any stretch of time no longer than the window, with
 * `minRetriesPerWindow = 0`, retries ≤ ratio · requests, hence
 * requests ≤ firstAttempts / (1 − ratio): at most 1.11× at 10 %.
 * An empty window grants nothing (unless `minRetriesPerWindow > 0`).
 *
 * @example
 * const b = new RetryBudget({ ratio: 0.1, windowMs: 10_000 });
 * for (let i = 0; i < 9; i++) b.onFirstAttempt(0);
 * b.tryRetry(0).granted // true: 1 retry of 10 requests
 * b.tryRetry(0).granted // false: 2 of 11 would exceed 10 %
 */
export class RetryBudget implements RetryThrottle {
  readonly name: string;
  readonly ratio: number;
  readonly windowMs: number;
  readonly minRetriesPerWindow: number;
  /** Event times in the window (ascending) and whether each was a retry. */
  private times: number[] = [];
  private isRetry: boolean[] = [];
  private head = 0;
  private requestsIn = 0;
  private retriesIn = 0;
  private lastMs = -Infinity;

  constructor(opts: RetryBudgetOptions = {}) {
    this.ratio = opts.ratio ?? 0.1;
    this.windowMs = opts.windowMs ?? 10_000;
    this.minRetriesPerWindow = opts.minRetriesPerWindow ?? 0;
    if (!(this.ratio >= 0 && this.ratio < 1)) throw new RangeError(`RetryBudget: ratio must be in [0, 1), got ${this.ratio}`);
    if (!(this.windowMs > 0)) throw new RangeError(`RetryBudget: windowMs must be > 0, got ${this.windowMs}`);
    if (!(Number.isInteger(this.minRetriesPerWindow) && this.minRetriesPerWindow >= 0)) {
      throw new RangeError(`RetryBudget: minRetriesPerWindow must be an integer >= 0, got ${this.minRetriesPerWindow}`);
    }
    this.name = `retry budget ${+(this.ratio * 100).toFixed(3)} %`;
  }

  /** Requests (first attempts + granted retries) in the window ending at `nowMs`. */
  requests(nowMs: number): number {
    this.advance(nowMs);
    return this.requestsIn;
  }

  /** Granted retries in the window ending at `nowMs`. */
  retries(nowMs: number): number {
    this.advance(nowMs);
    return this.retriesIn;
  }

  /** Records a first attempt sent at `nowMs`. */
  onFirstAttempt(nowMs: number): void {
    this.advance(nowMs);
    this.push(nowMs, false);
  }

  /** Grants a retry if it keeps retries within the ratio of requests in the window; records it when granted. */
  tryRetry(nowMs: number): RetryGrant {
    this.advance(nowMs);
    const allowed = this.retriesIn + 1 <= this.ratio * (this.requestsIn + 1) + this.minRetriesPerWindow + TOLERANCE;
    if (!allowed) {
      return { granted: false, reason: `retry budget spent: ${this.retriesIn} retries of ${this.requestsIn} requests in the last ${this.windowMs} ms` };
    }
    this.push(nowMs, true);
    return { granted: true, cost: 1 };
  }

  /** A budget does not care about successes. */
  onSuccess(nowMs: number): void {
    this.advance(nowMs);
  }

  private push(t: number, retry: boolean): void {
    this.times.push(t);
    this.isRetry.push(retry);
    this.requestsIn++;
    if (retry) this.retriesIn++;
  }

  /** Drops events at or before `nowMs − windowMs`: the window is (now − windowMs, now]. */
  private advance(nowMs: number): void {
    checkTime('RetryBudget', this.lastMs, nowMs);
    this.lastMs = nowMs;
    const cut = nowMs - this.windowMs;
    const times = this.times;
    let h = this.head;
    while (h < times.length && times[h]! <= cut) {
      this.requestsIn--;
      if (this.isRetry[h]) this.retriesIn--;
      h++;
    }
    // Compact now and then so a long run does not keep every event.
    if (h > 1024 && h * 2 > times.length) {
      this.times = times.slice(h);
      this.isRetry = this.isRetry.slice(h);
      h = 0;
    }
    this.head = h;
  }
}
