import { describe, expect, it } from 'vitest';
import { binomialCdf, describeRate, lowerBound, ruleOfThree, upperBound } from './stats.js';

// Reference values: scipy.stats.beta.ppf (Clopper–Pearson as beta quantiles),
// upper = beta.ppf(1 − α, k + 1, n − k), lower = beta.ppf(α, k, n − k + 1).
const UPPER: Array<[k: number, n: number, alpha: number, value: number]> = [
  [1, 10, 0.05, 0.39416330243650466],
  [1, 10, 0.025, 0.4450161170281954],
  [5, 20, 0.025, 0.49104587170795744],
  [3, 50, 0.05, 0.14783717636418123],
  [10, 100, 0.05, 0.16371762327581477],
  [2, 1000, 0.05, 0.006282284546723426],
];
const LOWER: Array<[number, number, number, number]> = [
  [1, 10, 0.05, 0.005116196891823701],
  [5, 20, 0.025, 0.08657146910143461],
  [10, 100, 0.05, 0.05526323768287004],
];

describe('flakiness arithmetic (SPEC §7)', () => {
  it('0 failures in 6 runs: the 95 % upper bound is 1 − 0.05^(1/6) ≈ 0.393, not 3/6', () => {
    expect(upperBound(0, 6)).toBeCloseTo(0.39303776899708265, 12);
    expect(upperBound(0, 6)).toBeCloseTo(1 - 0.05 ** (1 / 6), 15);
    expect(ruleOfThree(6)).toBe(0.5);
  });

  it('0 failures: closed form agrees with the bisection on the binomial tail', () => {
    for (const n of [1, 2, 6, 30, 100, 3000]) {
      const p = upperBound(0, n);
      expect(binomialCdf(0, n, p)).toBeCloseTo(0.05, 12);
    }
  });

  it.each(UPPER)('Clopper–Pearson upper bound k=%i n=%i alpha=%f matches the beta quantile', (k, n, alpha, value) => {
    expect(upperBound(k, n, alpha)).toBeCloseTo(value, 10);
  });

  it.each(LOWER)('Clopper–Pearson lower bound k=%i n=%i alpha=%f matches the beta quantile', (k, n, alpha, value) => {
    expect(lowerBound(k, n, alpha)).toBeCloseTo(value, 10);
  });

  it('edge cases: n = 0, k = n, monotone in k', () => {
    expect(upperBound(0, 0)).toBe(1);
    expect(upperBound(5, 5)).toBe(1);
    expect(lowerBound(5, 5)).toBeCloseTo(0.05 ** (1 / 5), 15);
    expect(lowerBound(0, 9)).toBe(0);
    let prev = 0;
    for (let k = 0; k <= 20; k++) {
      const u = upperBound(k, 20);
      expect(u).toBeGreaterThan(prev);
      prev = u;
    }
  });

  it('binomial CDF is exact on small cases', () => {
    expect(binomialCdf(1, 10, 0.5)).toBeCloseTo(11 / 1024, 15);
    expect(binomialCdf(10, 10, 0.3)).toBe(1);
    expect(binomialCdf(0, 3, 0)).toBe(1);
  });

  it('rejects impossible counts', () => {
    expect(() => upperBound(3, 2)).toThrow(RangeError);
    expect(() => upperBound(-1, 2)).toThrow(RangeError);
    expect(() => upperBound(0, 2, 1)).toThrow(RangeError);
  });

  it('describes a rate in one line', () => {
    expect(describeRate(0, 6)).toBe('0/6 failed (0.0 %); exact one-sided 95 % upper bound 39.30 %');
  });
});
