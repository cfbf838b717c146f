import { z } from 'zod';
import { claimById, CLAIMS } from './claims.js';
import type { CampaignResult } from './run.js';

/** The format of a shard's result file (`retrysim check --shard I/N --out FILE`). */
export const SHARD_FORMAT = 'retrysim.shard/1';

/** A shard's results as written by `--out`: the campaign's parameters, which shard, and one result per claim. */
export interface ShardFile {
  format: typeof SHARD_FORMAT;
  seed: number;
  runs: number;
  explore: 'random' | 'pct';
  timeBudgetMs: number | null;
  /** 0-based shard number and the number of shards. */
  shard: { index: number; count: number };
  wallMs: number;
  /** Results in claim order; `claim` is stored as its id. */
  results: Array<Omit<CampaignResult, 'claim'> & { claim: string }>;
}

/** A shard file that cannot be merged; the message names the file and what is wrong. */
export class ShardError extends Error {}

/** Serialises a shard's results. */
export function shardFile(o: Omit<ShardFile, 'format' | 'results'>, results: readonly CampaignResult[]): ShardFile {
  return { format: SHARD_FORMAT, ...o, results: results.map((r) => ({ ...r, claim: r.claim.id })) };
}

const claimIds = CLAIMS.map((c) => c.id) as [string, ...string[]];
const nat = z.number().int().nonnegative();
// The result's own fields are checked where the merge reads them; the
// counterexample is carried through as written (it is printed, not re-run).
const resultSchema = z.looseObject({
  claim: z.enum(claimIds),
  seed: nat,
  runs: nat,
  verdict: z.enum(['holds', 'fails']),
  shrinks: nat,
  firstFailureRun: z.number().int().positive().optional(),
  firstFailureMs: z.number().nonnegative().optional(),
  error: z.string().optional(),
  counterexample: z.looseObject({ size: z.looseObject({}), violations: z.array(z.looseObject({ invariant: z.string() })), notMinimal: z.array(z.string()) }).optional(),
});
const fileSchema = z.strictObject({
  format: z.literal(SHARD_FORMAT),
  seed: z.number().int(),
  runs: z.number().int().positive(),
  explore: z.enum(['random', 'pct']),
  timeBudgetMs: z.number().positive().nullable(),
  shard: z.strictObject({ index: nat, count: z.number().int().positive() }),
  wallMs: z.number().nonnegative(),
  results: z.array(resultSchema),
}).refine((f) => f.shard.index < f.shard.count, { message: 'shard.index must be below shard.count', path: ['shard', 'index'] });

/** Parses and validates one shard file; a {@link ShardError} names the file and the path. */
export function parseShardFile(text: string, source: string): ShardFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ShardError(`${source}: not JSON: ${(e as Error).message}`);
  }
  const r = fileSchema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ShardError(`${source}: not a ${SHARD_FORMAT} file: at ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data as unknown as ShardFile;
}

/**
 * Merges the shards of one campaign into the results the unsharded run
 * would print. Per claim: if any shard failed, the lowest failing run
 * decides — its shard shrank exactly the case the unsharded run would have,
 * and the campaign covered that many runs; otherwise the claim held over
 * every shard's runs. Refuses shards of different campaigns, a missing or
 * repeated shard, and claims that differ between shards.
 */
export function mergeShards(files: ReadonlyArray<{ source: string; file: ShardFile }>): { results: CampaignResult[]; seed: number; explore: 'random' | 'pct'; wallMs: number } {
  if (files.length === 0) throw new ShardError('no shard files given');
  const first = files[0]!;
  const count = first.file.shard.count;
  const seen = new Map<number, string>();
  for (const { source, file } of files) {
    for (const k of ['seed', 'runs', 'explore', 'timeBudgetMs'] as const) {
      if (file[k] !== first.file[k]) throw new ShardError(`${source}: ${k} ${JSON.stringify(file[k])} differs from ${first.source}'s ${JSON.stringify(first.file[k])}: not shards of one campaign`);
    }
    if (file.shard.count !== count) throw new ShardError(`${source}: shard count ${file.shard.count} differs from ${first.source}'s ${count}`);
    const again = seen.get(file.shard.index);
    if (again !== undefined) throw new ShardError(`${source}: shard ${file.shard.index + 1}/${count} is also in ${again}`);
    seen.set(file.shard.index, source);
    const ids = file.results.map((r) => r.claim).join(',');
    if (ids !== first.file.results.map((r) => r.claim).join(',')) throw new ShardError(`${source}: its claims (${ids}) differ from ${first.source}'s`);
  }
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length > 0) throw new ShardError(`missing shard${missing.length === 1 ? '' : 's'} ${missing.map((i) => `${i + 1}/${count}`).join(', ')} (give every shard's --out file)`);
  const timed = first.file.timeBudgetMs !== null;
  const results = first.file.results.map((_, k) => {
    const parts = files.map(({ file }) => file.results[k]!);
    const claim = claimById(parts[0]!.claim);
    const failing = parts.filter((p) => p.firstFailureRun !== undefined).sort((a, b) => a.firstFailureRun! - b.firstFailureRun!);
    const total = parts.reduce((n, p) => n + p.runs, 0);
    if (failing.length === 0) return { ...parts[0]!, claim, runs: total, verdict: 'holds' as const, shrinks: 0 } as CampaignResult;
    const win = failing[0]!;
    return { ...win, claim, runs: timed ? total : win.firstFailureRun! } as CampaignResult;
  });
  return { results, seed: first.file.seed, explore: first.file.explore, wallMs: Math.max(...files.map((f) => f.file.wallMs)) };
}
