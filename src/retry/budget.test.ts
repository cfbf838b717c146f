import { describe, expect, it } from 'vitest';
import { RetryBudget } from './budget.js';

describe('RetryBudget', () => {
  it('an empty window grants no retry (ratio alone), or minRetriesPerWindow of them', () => {
    expect(new RetryBudget().tryRetry(0)).toMatchObject({ granted: false, reason: expect.stringMatching(/0 retries of 0 requests/) });
    const b = new RetryBudget({ minRetriesPerWindow: 2 });
    expect(b.tryRetry(0).granted).toBe(true);
    expect(b.tryRetry(0).granted).toBe(true);
    expect(b.tryRetry(0).granted).toBe(false);
  });

  it('grants a retry only while retries stay ≤ 10 % of requests, counting the retry itself', () => {
    const b = new RetryBudget();
    for (let i = 0; i < 8; i++) b.onFirstAttempt(i);
    expect(b.tryRetry(8).granted).toBe(false); // 1 of 9 = 11 %
    b.onFirstAttempt(8);
    expect(b.tryRetry(9)).toEqual({ granted: true, cost: 1 }); // 1 of 10
    expect(b.tryRetry(9).granted).toBe(false); // 2 of 11
    for (let i = 0; i < 9; i++) b.onFirstAttempt(10);
    expect(b.tryRetry(10).granted).toBe(true); // 2 of 20
    expect([b.requests(10), b.retries(10)]).toEqual([20, 2]);
  });

  it('is exact at multiples where 0.1 · n falls just short in floating point', () => {
    for (const n of [10, 30, 70, 100, 1000]) {
      const b = new RetryBudget();
      for (let i = 0; i < n - n / 10; i++) b.onFirstAttempt(0);
      let granted = 0;
      while (b.tryRetry(0).granted) granted++;
      expect(granted).toBe(n / 10);
    }
  });

  it('slides: events at or before now − windowMs no longer count', () => {
    const b = new RetryBudget({ windowMs: 1000 });
    for (let i = 0; i < 9; i++) b.onFirstAttempt(0);
    expect(b.tryRetry(0).granted).toBe(true);
    expect(b.tryRetry(999).granted).toBe(false);
    expect(b.requests(999)).toBe(10);
    expect(b.requests(1000)).toBe(0); // window is (now − 1000, now]
    expect(b.tryRetry(1000).granted).toBe(false); // empty again
    for (let i = 0; i < 9; i++) b.onFirstAttempt(1500);
    expect(b.tryRetry(1500).granted).toBe(true);
  });

  it('keeps working across many windows (compaction)', () => {
    const b = new RetryBudget({ windowMs: 100 });
    let granted = 0;
    for (let t = 0; t < 50_000; t++) {
      b.onFirstAttempt(t);
      if (b.tryRetry(t).granted) granted++;
    }
    expect(b.requests(50_000)).toBeLessThanOrEqual(100 + 10);
    expect(granted).toBeGreaterThan(4000);
    expect(granted).toBeLessThanOrEqual(50_000 / 9);
  });

  it('takes time from the caller and refuses time running backwards; validates options', () => {
    const b = new RetryBudget();
    b.onFirstAttempt(10);
    expect(() => b.onFirstAttempt(9)).toThrow(/never decrease/);
    expect(() => new RetryBudget({ ratio: 1 })).toThrow(RangeError);
    expect(() => new RetryBudget({ windowMs: 0 })).toThrow(RangeError);
    expect(() => new RetryBudget({ minRetriesPerWindow: 0.5 })).toThrow(RangeError);
    expect(new RetryBudget().name).toBe('retry budget 10 %');
  });
});
