import { describe, expect, it } from 'vitest';
import { TokenBucket } from './token-bucket.js';

describe('TokenBucket (AWS SDK standard mode)', () => {
  it('starts full; a retry costs 5, after a timeout 10; empty → retries stop', () => {
    const b = new TokenBucket();
    expect(b.tokens(0)).toBe(500);
    expect(b.tryRetry(0)).toEqual({ granted: true, cost: 5 });
    expect(b.tryRetry(0, 'timeout')).toEqual({ granted: true, cost: 10 });
    expect(b.tokens(0)).toBe(485);
    let n = 0;
    while (b.tryRetry(1).granted) n++;
    expect(n).toBe(97);
    expect(b.tryRetry(2)).toMatchObject({ granted: false, reason: expect.stringMatching(/empty/) });
  });

  it('with no successes grants at most floor(capacity / retryCost) retries in total', () => {
    const b = new TokenBucket({ capacity: 12, retryCost: 5 });
    expect([b.tryRetry(0).granted, b.tryRetry(0).granted, b.tryRetry(0).granted]).toEqual([true, true, false]);
    expect(b.tokens(0)).toBe(2);
  });

  it('a success refunds the retry cost, or adds 1 after a first attempt, never above capacity', () => {
    const b = new TokenBucket({ capacity: 20 });
    b.onSuccess(0, 0);
    expect(b.tokens(0)).toBe(20); // capped
    b.tryRetry(1);
    b.tryRetry(1, 'timeout');
    expect(b.tokens(1)).toBe(5);
    b.onSuccess(2, 10);
    expect(b.tokens(2)).toBe(15);
    b.onSuccess(3, 0);
    expect(b.tokens(3)).toBe(16);
    b.onSuccess(4, 5);
    b.onSuccess(4, 5);
    expect(b.tokens(4)).toBe(20); // 26 capped at 20
  });

  it('refills with virtual time when refillPerSecond > 0, capped at capacity', () => {
    const b = new TokenBucket({ capacity: 10, refillPerSecond: 2 });
    b.tryRetry(0);
    b.tryRetry(0);
    expect(b.tokens(0)).toBe(0);
    expect(b.tokens(1000)).toBe(2);
    expect(b.tryRetry(1500).granted).toBe(false); // 3 tokens
    expect(b.tryRetry(2500).granted).toBe(true); // 5 tokens
    expect(b.tokens(100_000)).toBe(10);
  });

  it('optionally falls to a fixed slow rate when empty, instead of stopping', () => {
    const b = new TokenBucket({ capacity: 0, slowRetryIntervalMs: 1000 });
    expect(b.tryRetry(0)).toEqual({ granted: true, cost: 0 });
    expect(b.tryRetry(999).granted).toBe(false);
    expect(b.tryRetry(1000).granted).toBe(true);
    expect(b.tryRetry(1000).granted).toBe(false);
  });

  it('refuses time running backwards and bad options', () => {
    const b = new TokenBucket();
    b.tokens(5);
    expect(() => b.tryRetry(4)).toThrow(/never decrease/);
    expect(() => new TokenBucket({ retryCost: -1 })).toThrow(RangeError);
    expect(() => new TokenBucket({ slowRetryIntervalMs: 0 })).toThrow(RangeError);
  });
});
