import { describe, expect, test } from 'vitest';
import { Prng } from '../random/prng.js';
import { anthropicSdkPolicy, bugReportHarnessPolicy, codexSamplingPolicy, javaRetryPolicy, NAMED_POLICIES } from './policies.js';

const draws = (f: (rng: Prng) => number, n = 3000, seed = 3): number[] => {
  const rng = new Prng(seed);
  return Array.from({ length: n }, () => f(rng));
};

describe('Codex sampling layer', () => {
  const p = codexSamplingPolicy;
  test('attempts 0 and 1 both use 200 ms (±10 %), integer ms', () => {
    for (const n of [0, 1]) {
      for (const d of draws((r) => p.delayMs(n, r))) {
        expect(d).toBeGreaterThanOrEqual(180);
        expect(d).toBeLessThan(220);
        expect(Number.isInteger(d)).toBe(true);
      }
    }
  });
  test('no cap: attempt 10 is about 102 s', () => {
    for (const d of draws((r) => p.delayMs(10, r), 500)) {
      expect(d).toBeGreaterThanOrEqual(Math.floor(102_400 * 0.9));
      expect(d).toBeLessThan(102_400 * 1.1);
    }
  });
  test('5 retries by default; finite, integer and non-negative at attempt 1000', () => {
    expect(p.maxRetries).toBe(5);
    expect(p.maxAttempts).toBe(6);
    const d = p.delayMs(1000, new Prng(1));
    expect(Number.isSafeInteger(d)).toBe(true);
    expect(d).toBeGreaterThan(0);
  });
});

describe('Anthropic SDK 1.11', () => {
  const p = anthropicSdkPolicy;
  test('jitter only shortens, by at most 25 %: retry 0 in (375, 500] ms', () => {
    for (const d of draws((r) => p.delayMs(0, r))) {
      expect(d).toBeGreaterThan(375);
      expect(d).toBeLessThanOrEqual(500);
    }
  });
  test('capped at 8 s', () => {
    for (const n of [4, 5, 1000, 1_000_000]) {
      for (const d of draws((r) => p.delayMs(n, r), 300)) {
        expect(d).toBeGreaterThan(6000);
        expect(d).toBeLessThanOrEqual(8000);
      }
    }
  });
  test("Retry-After wins (the SDK honours 0 < value <= 60 s), even above the 8 s cap", () => {
    expect(p.delayMs(0, new Prng(1), { retryAfterMs: 1234 })).toBe(1234);
    expect(p.delayMs(3, new Prng(1), { retryAfterMs: 30_000 })).toBe(30_000);
    expect(p.delayMs(0, new Prng(1), { retryAfterMs: 0 })).toBeLessThanOrEqual(500); // ignored
    expect(p.delayMs(0, new Prng(1), { retryAfterMs: 120_000 })).toBeLessThanOrEqual(500); // ignored
  });
  test('2 retries, 3 attempts', () => {
    expect(p.maxRetries).toBe(2);
    expect(p.maxAttempts).toBe(3);
  });
});

describe('Java RetryPolicy (book default)', () => {
  const p = javaRetryPolicy;
  test('maxAttempts = 3 counts the first attempt', () => {
    expect(p.maxAttempts).toBe(3);
    expect(p.maxRetries).toBe(2);
  });
  test('failedAttempt 1 → 20 ms ± 20 %, rounded; 2 → 40 ms ± 20 %', () => {
    for (const d of draws((r) => p.delayMs(1, r))) {
      expect(d).toBeGreaterThanOrEqual(16);
      expect(d).toBeLessThanOrEqual(24);
      expect(Number.isInteger(d)).toBe(true);
    }
    for (const d of draws((r) => p.delayMs(2, r))) {
      expect(d).toBeGreaterThanOrEqual(32);
      expect(d).toBeLessThanOrEqual(48);
    }
  });
  test('the shift is clamped and the delay capped at 1 s (± 20 %) far out', () => {
    for (const n of [7, 21, 22, 40, 1000, 1_000_000]) {
      for (const d of draws((r) => p.delayMs(n, r), 300)) {
        expect(d).toBeGreaterThanOrEqual(800);
        expect(d).toBeLessThanOrEqual(1200);
      }
    }
  });
  test('failedAttempt < 1 is rejected', () => {
    expect(() => p.delayMs(0, new Prng(1))).toThrow(/>= 1/);
  });
});

describe('bug-report harness (Full Jitter 20/200 ms)', () => {
  const p = bugReportHarnessPolicy;
  test('4 attempts; retry n waits U[0, min(200, 20·2^n))', () => {
    expect(p.maxAttempts).toBe(4);
    const limits: Record<number, number> = { 1: 40, 2: 80, 3: 160, 4: 200, 1000: 200 };
    for (const [n, lim] of Object.entries(limits)) {
      const ds = draws((r) => p.delayMs(Number(n), r));
      for (const d of ds) {
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(lim);
      }
      expect(Math.max(...ds)).toBeGreaterThan(lim * 0.95); // it really is full jitter
    }
  });
  test('n < 1 or not an integer is rejected', () => {
    expect(() => p.delayMs(0, new Prng(1))).toThrow(RangeError);
    expect(() => p.delayMs(1.5, new Prng(1))).toThrow(RangeError);
  });
});

test('every named policy documents its numbering and is finite and >= 0 at attempt 1000', () => {
  for (const p of Object.values(NAMED_POLICIES)) {
    expect(p.retryNumbering.length).toBeGreaterThan(10);
    expect(p.maxRetries).toBe(p.maxAttempts - 1);
    const d = p.delayMs(1000, new Prng(9));
    expect(Number.isFinite(d)).toBe(true);
    expect(d).toBeGreaterThanOrEqual(0);
  }
});
