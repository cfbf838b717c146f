/**
 * Flakiness arithmetic (SPEC §7): exact binomial confidence bounds on a
 * failure rate observed as k failures in n runs. Pure functions, no
 * dependencies: the binomial tail is summed in log space and the bound found
 * by bisection, which is exact to double precision (the Clopper–Pearson
 * bound is the p at which the binomial tail equals alpha; equivalently a
 * beta quantile, Beta(1 − alpha; k + 1, n − k)).
 */

function checkCounts(k: number, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
  if (!Number.isSafeInteger(k) || k < 0 || k > n) throw new RangeError(`k must be an integer in [0, n=${n}], got ${k}`);
}

function checkAlpha(alpha: number): void {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
}

/** log(a + b) from log a and log b, without overflow. */
function logAdd(a: number, b: number): number {
  if (a === -Infinity) return b;
  if (b === -Infinity) return a;
  const m = Math.max(a, b);
  return m + Math.log(Math.exp(a - m) + Math.exp(b - m));
}

/**
 * P(X ≤ k) for X ~ Binomial(n, p), exactly (summed term by term in log space).
 *
 * @example binomialCdf(1, 10, 0.5) // 11/1024
 */
export function binomialCdf(k: number, n: number, p: number): number {
  checkCounts(Math.min(k, n), n);
  if (k >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  const lp = Math.log(p);
  const lq = Math.log1p(-p);
  // term_0 = q^n; term_i = term_{i-1} · (n − i + 1)/i · p/q
  let term = n * lq;
  let sum = term;
  for (let i = 1; i <= k; i++) {
    term += Math.log((n - i + 1) / i) + lp - lq;
    sum = logAdd(sum, term);
  }
  return Math.min(1, Math.exp(sum));
}

/** P(X ≥ k) for X ~ Binomial(n, p). */
export function binomialSf(k: number, n: number, p: number): number {
  if (k <= 0) return 1;
  return 1 - binomialCdf(k - 1, n, p);
}

/** Bisection on a monotone function of p in [0, 1]; 200 halvings reach the last bit. */
function bisect(f: (p: number) => boolean): number {
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 200 && hi - lo > 0; i++) {
    const mid = (lo + hi) / 2;
    if (mid === lo || mid === hi) break;
    if (f(mid)) hi = mid;
    else lo = mid;
  }
  return (lo + hi) / 2;
}

/**
 * Exact one-sided upper confidence bound on a failure rate after k failures
 * in n runs (Clopper–Pearson): the largest p still consistent with seeing at
 * most k failures, i.e. the p solving P(X ≤ k | n, p) = alpha. With k = 0 it
 * is `1 − alpha^(1/n)` in closed form (n = 6 → 0.393 at 95 %); with n = 0
 * nothing is known and the bound is 1.
 *
 * @param alpha one-sided error, default 0.05 (a 95 % bound)
 * @example upperBound(0, 6) // ≈ 0.3930
 */
export function upperBound(k: number, n: number, alpha = 0.05): number {
  checkCounts(k, n);
  checkAlpha(alpha);
  if (k === n) return 1;
  if (k === 0) return 1 - Math.pow(alpha, 1 / n);
  // P(X ≤ k | p) falls as p grows: find where it crosses alpha.
  return bisect((p) => binomialCdf(k, n, p) < alpha);
}

/**
 * Exact one-sided lower confidence bound (Clopper–Pearson): the p solving
 * P(X ≥ k | n, p) = alpha; 0 when k = 0.
 */
export function lowerBound(k: number, n: number, alpha = 0.05): number {
  checkCounts(k, n);
  checkAlpha(alpha);
  if (k === 0) return 0;
  if (k === n) return Math.pow(alpha, 1 / n);
  return bisect((p) => binomialSf(k, n, p) > alpha);
}

/** The naive "rule of three" (3/n) that SPEC §7 warns about, for comparison only. */
export function ruleOfThree(n: number): number {
  return n === 0 ? 1 : Math.min(1, 3 / n);
}

/** A failure count with its exact one-sided 95 % upper bound, as one line of text. */
export function describeRate(k: number, n: number, alpha = 0.05): string {
  const ub = upperBound(k, n, alpha);
  const conf = Math.round((1 - alpha) * 100);
  return `${k}/${n} failed (${n === 0 ? '–' : ((100 * k) / n).toFixed(1) + ' %'}); exact one-sided ${conf} % upper bound ${(100 * ub).toFixed(2)} %`;
}
