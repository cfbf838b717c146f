import { describe, expect, it } from 'vitest';
import { Prng } from './prng.js';
import { standardNormal, absNormal } from './normal.js';

describe('Prng', () => {
  it('gives the same stream for the same seed and different streams for different seeds', () => {
    const a = new Prng(42), b = new Prng(42), c = new Prng(43);
    const xs = Array.from({ length: 5 }, () => a.nextU32());
    expect(Array.from({ length: 5 }, () => b.nextU32())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.nextU32())).not.toEqual(xs);
  });

  it('pins the first outputs so a platform or refactoring change is caught', () => {
    const r = new Prng(1);
    expect([r.nextU32(), r.nextU32(), r.nextU32()]).toMatchInlineSnapshot(`
      [
        3242974957,
        798482042,
        2152405511,
      ]
    `);
  });

  it('forks are independent of how much the parent drew', () => {
    const a = new Prng(7);
    const b = new Prng(7);
    b.next(); b.next();
    expect(a.fork('net').nextU32()).toBe(b.fork('net').nextU32());
    expect(a.fork('net').nextU32()).not.toBe(a.fork('disk').nextU32());
  });

  it('accepts large and negative safe-integer seeds and refuses others', () => {
    expect(new Prng(2 ** 52 + 5).nextU32()).not.toBe(new Prng(5).nextU32());
    expect(new Prng(-1).next()).toBeLessThan(1);
    expect(() => new Prng(1.5)).toThrow(/safe integer/);
  });

  it('uniform and int stay in range', () => {
    const r = new Prng(3);
    for (let i = 0; i < 10_000; i++) {
      const u = r.uniform(0.9, 1.1);
      expect(u >= 0.9 && u < 1.1).toBe(true);
      const k = r.int(7);
      expect(Number.isInteger(k) && k >= 0 && k < 7).toBe(true);
    }
  });

  it('uuid has the v4 shape', () => {
    expect(new Prng(9).uuid()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('ziggurat normal', () => {
  it('has mean 0, variance 1 and normal tail mass', () => {
    const r = new Prng(11);
    const n = 200_000;
    let s = 0, s2 = 0, tail = 0;
    for (let i = 0; i < n; i++) {
      const x = standardNormal(r);
      s += x; s2 += x * x;
      if (Math.abs(x) > 1.96) tail++;
    }
    const mean = s / n;
    expect(Math.abs(mean)).toBeLessThan(0.01);
    expect(Math.abs(s2 / n - mean * mean - 1)).toBeLessThan(0.015);
    expect(Math.abs(tail / n - 0.05)).toBeLessThan(0.003);
  });

  it('absNormal(10, 2) is never negative and averages about 10', () => {
    const r = new Prng(12);
    let s = 0;
    for (let i = 0; i < 50_000; i++) {
      const x = absNormal(r, 10, 2);
      expect(x).toBeGreaterThanOrEqual(0);
      s += x;
    }
    expect(Math.abs(s / 50_000 - 10)).toBeLessThan(0.05);
  });

  it('nextI32 is the same stream as nextU32, as int32', () => {
    const a = new Prng(123);
    const b = new Prng(123);
    for (let i = 0; i < 10_000; i++) expect(a.nextI32()).toBe(b.nextU32() | 0);
  });
});
