import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { claimById } from './claims.js';
import { claimSeed } from './job.js';
import { runCampaign, type CampaignResult } from './run.js';
import { mergeShards, parseShardFile, shardFile, ShardError } from './shard.js';
import { nextOwned, owns, ownedCount, WHOLE } from './runs.js';

const CLAIM_IDS = ['key_atomic-tool_call-holds', 'key_split-tool_call-race-fails', 'naive-none-fails'];

async function campaign(seed: number, runs: number, slice = WHOLE): Promise<CampaignResult[]> {
  const out: CampaignResult[] = [];
  for (const id of CLAIM_IDS) out.push(await runCampaign({ claim: claimById(id), runs, seed: claimSeed(seed, id), slice }));
  return out;
}

/** What must not depend on the split: verdict, runs, first failing run, and the counterexample itself. */
const essence = (rs: readonly CampaignResult[]) => rs.map((r) => ({ claim: r.claim.id, verdict: r.verdict, runs: r.runs, first: r.firstFailureRun, scenario: r.counterexample?.scenario, size: r.counterexample?.size }));

describe('slices of a campaign', () => {
  it('partition the run indices: every index owned by exactly one (shard, worker)', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 4 }), fc.nat({ max: 5000 }), (shards, workers, i) => {
      let owners = 0;
      for (let s = 0; s < shards; s++) for (let w = 0; w < workers; w++) if (owns({ shard: s, shards, worker: w, workers }, i)) owners++;
      expect(owners).toBe(1);
    }));
    const sl = { shard: 1, shards: 3, worker: 0, workers: 1 };
    expect(nextOwned(sl, 0)).toBe(64);
    let n = 0;
    for (let i = 0; i < 1000; i++) if (owns(sl, i)) n++;
    expect(ownedCount(sl, 1000)).toBe(n);
  });

  it('merging N shards (N = 1..5) gives exactly the unsharded result', async () => {
    const seed = 5;
    const runs = 300;
    const whole = await campaign(seed, runs);
    for (let n = 1; n <= 5; n++) {
      const files = [];
      for (let i = 0; i < n; i++) {
        const rs = await campaign(seed, runs, { shard: i, shards: n, worker: 0, workers: 1 });
        // Through the file format, as a CI job would hand them over.
        const text = JSON.stringify(shardFile({ seed, runs, explore: 'random', timeBudgetMs: null, shard: { index: i, count: n }, wallMs: 1 }, rs));
        files.push({ source: `s${i}`, file: parseShardFile(text, `s${i}`) });
      }
      expect(essence(mergeShards(files).results), `N = ${n}`).toEqual(essence(whole));
    }
  });

  it('refuses a missing, repeated or foreign shard, naming it', async () => {
    const rs = await campaign(1, 50);
    const f = (index: number, count: number, seed = 1) => ({ source: `f${index}-${seed}`, file: parseShardFile(JSON.stringify(shardFile({ seed, runs: 50, explore: 'random', timeBudgetMs: null, shard: { index, count }, wallMs: 1 }, rs)), 'x') });
    expect(() => mergeShards([f(0, 2)])).toThrow(/missing shard 2\/2/);
    expect(() => mergeShards([f(0, 2), f(0, 2)])).toThrow(/shard 1\/2 is also in/);
    expect(() => mergeShards([f(0, 2), f(1, 2, 9)])).toThrow(/seed 9 differs/);
    expect(() => parseShardFile('{"format":"retrysim.shard/1"}', 'bad.json')).toThrow(ShardError);
    expect(() => parseShardFile('nope', 'bad.json')).toThrow(/bad.json: not JSON/);
  });
});
