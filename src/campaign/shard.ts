import { z } from 'zod';
import { claimById, CLAIMS } from './claims.js';
import type { CampaignResult } from './run.js';
import { mergeCoverage, type Coverage } from './coverage.js';
import { ownedCount } from './runs.js';
import type { Shortfall } from './verdict.js';

/** The format of a shard's result file (`retrysim check --shard I/N --out FILE`). */
export const SHARD_FORMAT = 'retrysim.shard/1';

/** A shard's results as written by `--out`: the campaign's parameters, which shard, and one result per claim. */
export interface ShardFile {
  format: typeof SHARD_FORMAT;
  seed: number;
  /** Runs asked per claim (with `untilBudget`, the least that counts). */
  runs: number;
  /** A time budget without --runs: each claim ran until the budget, past `runs`. */
  untilBudget?: true;
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

// The pieces every kind of shard file (built-in claims, services, clients) checks alike.
const nat = z.number().int().nonnegative();
/** A count of runs. */
export const natSchema = nat;
/** A coverage table as a shard carries it. */
export const coverageSchema = z.strictObject({ runs: nat, rows: z.array(z.strictObject({ id: z.string(), what: z.string(), runs: nat })) });
/** Which shard of how many. */
export const shardOfSchema = z.strictObject({ index: nat, count: z.number().int().positive() });
/** A shard's index lies below its count. */
export const shardIndexRule: [(f: { shard: { index: number; count: number } }) => boolean, { message: string; path: PropertyKey[] }] =
  [(f) => f.shard.index < f.shard.count, { message: 'shard.index must be below shard.count', path: ['shard', 'index'] }];

/** `raw` checked against a shard file's `schema`; else a {@link ShardError} naming the file, the format and the first wrong path. */
export function parseShardAs<T>(schema: z.ZodType, format: string, raw: unknown, source: string): T {
  const r = schema.safeParse(raw);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ShardError(`${source}: not a ${format} file: at ${i.path.join('.') || '(root)'}: ${i.message}`);
  }
  return r.data as T;
}
// The result's own fields are checked where the merge reads them; the
// counterexample is carried through as written (it is printed, not re-run).
const resultSchema = z.looseObject({
  claim: z.enum(claimIds),
  seed: nat,
  runs: nat,
  verdict: z.enum(['holds', 'fails', 'inconclusive']),
  shrinks: nat,
  complete: z.boolean().optional(),
  bounded: z.looseObject({ schedules: nat, complete: z.boolean() }).optional(),
  coverage: coverageSchema.optional(),
  firstFailureRun: z.number().int().positive().optional(),
  firstFailureMs: z.number().nonnegative().optional(),
  error: z.string().optional(),
  counterexample: z.looseObject({ size: z.looseObject({}), violations: z.array(z.looseObject({ invariant: z.string() })), notMinimal: z.array(z.string()) }).optional(),
});
const fileSchema = z.strictObject({
  format: z.literal(SHARD_FORMAT),
  seed: z.number().int(),
  runs: z.number().int().positive(),
  untilBudget: z.literal(true).optional(),
  explore: z.enum(['random', 'pct']),
  timeBudgetMs: z.number().positive().nullable(),
  shard: shardOfSchema,
  wallMs: z.number().nonnegative(),
  results: z.array(resultSchema),
}).refine(...shardIndexRule);

/** Parses and validates one shard file; a {@link ShardError} names the file and the path. */
export function parseShardFile(text: string, source: string): ShardFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ShardError(`${source}: not JSON: ${(e as Error).message}`);
  }
  return parseShardAs<ShardFile>(fileSchema, SHARD_FORMAT, raw, source);
}

/**
 * Checks that a shard's counts are ones `check --shard` could have written:
 * a shard owns a fixed set of run indices (blocks dealt round-robin), so
 * without a time budget a claim with no failure ran exactly that many, and
 * with one at most that many; a failing run is one of its own indices; the
 * coverage counted no more runs than ran. A hand-edited or truncated file
 * is refused (exit 2) rather than merged into a verdict: merge cannot know
 * which number is the true one, and guessing "inconclusive" would hide the
 * edit as a slow machine.
 */
function checkCounts(source: string, file: ShardFile, r: ShardFile['results'][number]): void {
  const slice = { shard: file.shard.index, shards: file.shard.count, worker: 0, workers: 1 };
  const where = `${source}: claim ${r.claim}`;
  const bad = (why: string) => new ShardError(`${where}: ${why}; not counts retrysim check writes (edited or truncated?)`);
  const owned = file.untilBudget ? undefined : ownedCount(slice, file.runs);
  const timed = file.timeBudgetMs !== null;
  const fromExhaustive = r.complete !== undefined; // the bounded part failed: its runs are schedules
  if (r.firstFailureRun !== undefined && !fromExhaustive) {
    const i = r.firstFailureRun - 1;
    if (!file.untilBudget && i >= file.runs) throw bad(`first failing run ${r.firstFailureRun} is beyond the campaign's ${file.runs} runs`);
    if (ownedCount(slice, i + 1) === ownedCount(slice, i)) throw bad(`first failing run ${r.firstFailureRun} is not one of shard ${file.shard.index + 1}/${file.shard.count}'s runs`);
  }
  if (r.verdict !== 'fails' && owned !== undefined) {
    if (r.runs > owned) throw bad(`${r.runs} runs, but shard ${file.shard.index + 1}/${file.shard.count} of a ${file.runs}-run campaign owns ${owned}`);
    if (!timed && r.runs < owned) throw bad(`${r.runs} runs without a failure or a time budget, but shard ${file.shard.index + 1}/${file.shard.count} of a ${file.runs}-run campaign owns ${owned}`);
  }
  if (r.verdict === 'holds' && timed && owned !== undefined && r.runs < owned) throw bad(`verdict holds after ${r.runs} of the ${owned} runs it owns`);
  if (r.bounded !== undefined && file.shard.index !== 0) throw bad('a bounded-exhaustive part outside shard 1');
  const c = r.coverage as Coverage | undefined;
  if (c !== undefined) {
    const ran = (fromExhaustive ? 0 : r.runs) + (r.bounded?.schedules ?? 0);
    if (c.runs !== ran) throw bad(`coverage counts ${c.runs} runs, but ${ran} ran`);
    const over = c.rows.find((x) => x.runs > c.runs);
    if (over !== undefined) throw bad(`coverage says ${over.runs} runs reached '${over.id}', of ${c.runs}`);
  }
}

/**
 * Merges the shards of one campaign into the results the unsharded run
 * would print. Per claim: if any shard failed, the lowest failing run
 * decides — its shard shrank exactly the case the unsharded run would have,
 * and the campaign covered that many runs (a failure of the bounded-
 * exhaustive part, in shard 1, decides before any); otherwise the claim
 * holds over every shard's runs when they add up to the runs asked, and is
 * inconclusive when a shard stopped short (a time budget) — the coverage is
 * the sum. Refuses shards of different campaigns, a missing or repeated
 * shard, claims that differ between shards, and counts no check run writes.
 */
export function mergeShards(files: ReadonlyArray<{ source: string; file: ShardFile }>): { results: CampaignResult[]; seed: number; explore: 'random' | 'pct'; wallMs: number } {
  if (files.length === 0) throw new ShardError('no shard files given');
  const first = files[0]!;
  const count = first.file.shard.count;
  const seen = new Map<number, string>();
  for (const { source, file } of files) {
    for (const k of ['seed', 'runs', 'untilBudget', 'explore', 'timeBudgetMs'] as const) {
      if (file[k] !== first.file[k]) throw new ShardError(`${source}: ${k} ${JSON.stringify(file[k])} differs from ${first.source}'s ${JSON.stringify(first.file[k])}: not shards of one campaign`);
    }
    if (file.shard.count !== count) throw new ShardError(`${source}: shard count ${file.shard.count} differs from ${first.source}'s ${count}`);
    const again = seen.get(file.shard.index);
    if (again !== undefined) throw new ShardError(`${source}: shard ${file.shard.index + 1}/${count} is also in ${again}`);
    seen.set(file.shard.index, source);
    const ids = file.results.map((r) => r.claim).join(',');
    if (ids !== first.file.results.map((r) => r.claim).join(',')) throw new ShardError(`${source}: its claims (${ids}) differ from ${first.source}'s`);
    for (const r of file.results) checkCounts(source, file, r);
  }
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length > 0) throw new ShardError(`missing shard${missing.length === 1 ? '' : 's'} ${missing.map((i) => `${i + 1}/${count}`).join(', ')} (give every shard's --out file)`);
  const timed = first.file.timeBudgetMs !== null;
  const asked = first.file.runs;
  const results = first.file.results.map((_, k) => {
    const parts = files.map(({ file }) => file.results[k]!);
    const claim = claimById(parts[0]!.claim);
    const boundedFail = parts.find((p) => p.verdict === 'fails' && p.complete !== undefined);
    if (boundedFail !== undefined) return { ...boundedFail, claim } as CampaignResult;
    const failing = parts.filter((p) => p.firstFailureRun !== undefined).sort((a, b) => a.firstFailureRun! - b.firstFailureRun!);
    const total = parts.reduce((n, p) => n + p.runs, 0);
    if (failing.length === 0) {
      const bounded = parts.find((p) => p.bounded !== undefined)?.bounded as CampaignResult['bounded'];
      const coverage = parts.reduce<Coverage | undefined>((c, p) => mergeCoverage(c, p.coverage as Coverage | undefined), undefined);
      const short = total < asked;
      const inconclusive = short || parts.some((p) => p.verdict === 'inconclusive') || (bounded !== undefined && !bounded.complete);
      const shortfall: Shortfall | undefined = !inconclusive ? undefined
        : short || bounded === undefined || bounded.complete
          ? { done: total, asked, unit: 'runs', stoppedBy: timed ? `time budget ${first.file.timeBudgetMs} ms` : 'a shard that stopped short' }
          : { done: bounded.schedules, asked: bounded.schedulesMax, unit: 'schedules', stoppedBy: `the schedule limit of ${bounded.schedulesMax} per small scenario` };
      const { shortfall: _s, ...rest } = parts[0]!;
      return {
        ...rest, claim, runs: total, verdict: inconclusive ? 'inconclusive' : 'holds', shrinks: 0,
        asked,
        ...(bounded ? { bounded } : {}),
        ...(coverage ? { coverage } : {}),
        ...(shortfall ? { shortfall } : {}),
      } as CampaignResult;
    }
    const win = failing[0]!;
    const { coverage: _c, ...rest } = win;
    const bounded = parts.find((p) => p.bounded !== undefined)?.bounded;
    return { ...rest, claim, runs: timed ? total : win.firstFailureRun!, ...(bounded ? { bounded } : {}) } as CampaignResult;
  });
  return { results, seed: first.file.seed, explore: first.file.explore, wallMs: Math.max(...files.map((f) => f.file.wallMs)) };
}
