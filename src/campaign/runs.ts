import fc from 'fast-check';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { mix32 } from '../random/prng.js';

/**
 * Run i of a claim's campaign is a pure function of (claim seed, i): its own
 * random stream, seeded by mixing the two, and fast-check's bias for run
 * index i (small values more often early on, as `fc.check` does). So a
 * campaign can be cut into any slices — threads, shards on other machines —
 * and every slice generates exactly the cases the whole campaign would.
 */
export function caseAt<T>(arb: fc.Arbitrary<T>, claimSeed: number, i: number): fc.Value<T> {
  const seed = mix32((mix32(claimSeed >>> 0) ^ i) >>> 0) ^ mix32(i + 0x5bd1e995);
  return arb.generate(new fc.Random(xoroshiro128plus(seed | 0)), biasFactor(i));
}

/** fast-check's bias for run index i (its runner's `runIdToFrequency`): 2 + ⌊log10(i + 1)⌋. */
export function biasFactor(i: number): number {
  return 2 + Math.floor(Math.log10(i + 1));
}

/** Consecutive run indices handed out together, so every slice works through the low indices first. */
export const BLOCK = 64;

/**
 * Which run indices a slice owns: blocks of {@link BLOCK} dealt round-robin,
 * first across `shards` (machines), then a shard's blocks across `workers`
 * (threads). Part numbers are 0-based.
 */
export interface Slice {
  shard: number;
  shards: number;
  worker: number;
  workers: number;
}

/** The whole campaign in one slice. */
export const WHOLE: Slice = { shard: 0, shards: 1, worker: 0, workers: 1 };

/** True when `slice` owns run index i. */
export function owns(slice: Slice, i: number): boolean {
  const block = Math.floor(i / BLOCK);
  if (block % slice.shards !== slice.shard) return false;
  return Math.floor(block / slice.shards) % slice.workers === slice.worker;
}

/** The next run index ≥ i that `slice` owns. */
export function nextOwned(slice: Slice, i: number): number {
  let j = i;
  // At most one skip per foreign block: a jump to the next block start.
  while (!owns(slice, j)) j = (Math.floor(j / BLOCK) + 1) * BLOCK;
  return j;
}

/** How many of the indices 0..runs-1 `slice` owns. */
export function ownedCount(slice: Slice, runs: number): number {
  let n = 0;
  for (let b = 0; b * BLOCK < runs; b++) {
    if (owns(slice, b * BLOCK)) n += Math.min(BLOCK, runs - b * BLOCK);
  }
  return n;
}
