import { describe, expect, test } from 'vitest';
import { Prng } from '../random/prng.js';
import { createBackoff, expoMs, STRATEGY_NAMES, strategyCode } from './strategies.js';

describe('herd backoff strategies (SPEC §1)', () => {
  const rng = new Prng(7);
  const opts = { baseMs: 5, capMs: 2000 };

  test('expo: v_n = min(cap, base·2^n); first herd backoff (n = 1) is 10 ms', () => {
    const b = createBackoff('expo', opts);
    expect(b.delayMs(1, rng)).toBe(10);
    expect(b.delayMs(8, rng)).toBe(1280);
    expect(b.delayMs(9, rng)).toBe(2000);
  });

  test('none is always 0', () => {
    expect(createBackoff('none', opts).delayMs(50, rng)).toBe(0);
  });

  test('codex jitter is applied after the cap: within [0.9, 1.1) × v_n, up to 1.1 × cap', () => {
    const b = createBackoff('codex', opts);
    let max = 0;
    for (let i = 0; i < 5000; i++) {
      const d = b.delayMs(20, rng);
      expect(d).toBeGreaterThanOrEqual(1800);
      expect(d).toBeLessThan(2200);
      max = Math.max(max, d);
    }
    expect(max).toBeGreaterThan(2000);
  });

  test('equal within [v/2, v); full within [0, v)', () => {
    const e = createBackoff('equal', opts);
    const f = createBackoff('full', opts);
    for (let n = 1; n < 15; n++) {
      const v = expoMs(n, 5, 2000);
      for (let i = 0; i < 200; i++) {
        const de = e.delayMs(n, rng);
        expect(de).toBeGreaterThanOrEqual(v / 2);
        expect(de).toBeLessThan(v);
        const df = f.delayMs(n, rng);
        expect(df).toBeGreaterThanOrEqual(0);
        expect(df).toBeLessThan(v);
      }
    }
  });

  test('decorrelated keeps per-client state: sleep in [base, 3·prev), capped; reset restores base', () => {
    const b = createBackoff('decorrelated', opts);
    let prev = 5;
    for (let i = 0; i < 2000; i++) {
      const d = b.delayMs(i + 1, rng);
      expect(d).toBeGreaterThanOrEqual(5);
      expect(d).toBeLessThanOrEqual(Math.min(2000, prev * 3));
      prev = d;
    }
    const other = createBackoff('decorrelated', opts);
    expect(other.delayMs(1, new Prng(1))).toBeLessThan(15); // its own state starts at base
    b.reset();
    expect(b.delayMs(1, rng)).toBeLessThan(15);
  });

  test('nothing overflows, goes negative or NaN at attempt 1000 (or 1e6)', () => {
    for (const name of STRATEGY_NAMES) {
      const b = createBackoff(name, opts);
      for (const n of [0, 1, 1000, 1_000_000]) {
        const d = b.delayMs(n, rng);
        expect(Number.isFinite(d)).toBe(true);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(2200);
      }
    }
    expect(expoMs(5000, 0, 2000)).toBe(0); // base 0: 0, not 0·∞ = NaN
  });

  test('unknown names are rejected with the list of known ones', () => {
    expect(() => strategyCode('fibonacci')).toThrow(/known: none, expo/);
    expect(() => createBackoff('fibonacci')).toThrow(/unknown backoff strategy/);
  });
});
