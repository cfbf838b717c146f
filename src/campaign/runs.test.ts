import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { biasFactor, BLOCK, caseAt, nextOwned, owns, ownedCount, WHOLE } from './runs.js';

describe('run i of a claim: a pure function of (claim seed, i)', () => {
  const arb = fc.array(fc.integer(), { minLength: 8, maxLength: 8 });
  it('the same case for the same seed and index, another for another index or seed', () => {
    expect(caseAt(arb, 7, 3).value).toEqual(caseAt(arb, 7, 3).value);
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) seen.add(JSON.stringify(caseAt(arb, 7, i).value));
    for (const seed of [0, 1, 2, 8, 0x7fffffff, 0xffffffff]) seen.add(JSON.stringify(caseAt(arb, seed, 0).value));
    // Every index and every seed its own case: nothing collides.
    expect(seen.size).toBe(306);
    // A seed is read as an unsigned 32-bit number: -1 is 0xffffffff.
    expect(caseAt(arb, -1, 5).value).toEqual(caseAt(arb, 0xffffffff, 5).value);
  });

  it('fast-check\'s bias for run i: 2 + floor(log10(i + 1)), small values more often early on', () => {
    expect([0, 8, 9, 98, 99, 998, 999].map(biasFactor)).toEqual([2, 2, 3, 3, 4, 4, 5]);
    // The bias reaches the generator: early runs of a wide integer are mostly small.
    const wide = fc.integer({ min: 0, max: 1_000_000_000 });
    let small = 0;
    for (let i = 0; i < 100; i++) if (caseAt(wide, 1, i).value < 1000) small++;
    expect(small).toBeGreaterThan(10);
  });
});

describe('slices: blocks of 64 dealt round-robin to shards, then to a shard\'s threads', () => {
  const sl = { shard: 0, shards: 2, worker: 1, workers: 2 };
  it('which indices a slice owns', () => {
    expect(BLOCK).toBe(64);
    expect(WHOLE).toEqual({ shard: 0, shards: 1, worker: 0, workers: 1 });
    // Shard 1/2 has blocks 0, 2, 4, 6, ...; its thread 2/2 the second of each pair: blocks 2, 6, 10.
    const mine = Array.from({ length: 800 }, (_, i) => i).filter((i) => owns(sl, i));
    expect(mine[0]).toBe(128);
    expect(mine.length).toBe(64 * 3);
    expect(mine.every((i) => [2, 6, 10].includes(Math.floor(i / 64)))).toBe(true);
    expect(owns(WHOLE, 0) && owns(WHOLE, 12345)).toBe(true);
    expect(owns({ shard: 1, shards: 2, worker: 0, workers: 1 }, 63)).toBe(false);
    expect(owns({ shard: 1, shards: 2, worker: 0, workers: 1 }, 64)).toBe(true);
  });

  it('the next index a slice owns, jumping over foreign blocks', () => {
    expect(nextOwned(sl, 0)).toBe(128);
    expect(nextOwned(sl, 127)).toBe(128);
    expect(nextOwned(sl, 130)).toBe(130);
    expect(nextOwned(sl, 191)).toBe(191);
    expect(nextOwned(sl, 192)).toBe(384);
    expect(nextOwned(WHOLE, 77)).toBe(77);
  });

  it('how many of the first N indices a slice owns, a partial last block included', () => {
    expect(ownedCount(WHOLE, 0)).toBe(0);
    expect(ownedCount(WHOLE, 1)).toBe(1);
    expect(ownedCount(WHOLE, 65)).toBe(65);
    expect(ownedCount(sl, 128)).toBe(0);
    expect(ownedCount(sl, 150)).toBe(22);
    expect(ownedCount(sl, 192)).toBe(64);
    expect(ownedCount(sl, 400)).toBe(64 + 16);
    fc.assert(fc.property(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 3 }), fc.nat({ max: 2000 }), (shards, workers, runs) => {
      let total = 0;
      for (let s = 0; s < shards; s++) for (let w = 0; w < workers; w++) total += ownedCount({ shard: s, shards, worker: w, workers }, runs);
      expect(total).toBe(runs);
    }));
  });
});
