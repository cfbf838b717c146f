import { z } from 'zod';
import { mergeCoverage, type Coverage } from '../campaign/coverage.js';
import { ownedCount, owns } from '../campaign/runs.js';
import { coverageSchema, natSchema, parseShardAs, ShardError, shardIndexRule, shardOfSchema } from '../campaign/shard.js';
import type { ServiceCampaignResult } from './campaign.js';
import { KEY_SOURCES, type KeySource } from '../harness/keys.js';

/** The format of a `check --service --shard I/N --out FILE` result file. */
export const SERVICE_SHARD_FORMAT = 'retrysim.service-shard/1';

/** What one shard of a service campaign ran and found, and the campaign it belongs to. */
export interface ServiceShardFile {
  format: typeof SERVICE_SHARD_FORMAT;
  /** `--service` or `--app`: how the module is named on a command line. */
  flag: '--service' | '--app';
  /** Scenarios a holding verdict needs (`--runs`, or its default under a budget alone). */
  atLeast: number;
  /** At most this many run indices (the campaign's `--runs`, or unbounded under a budget alone). */
  maxRuns: number;
  timeBudgetMs: number | null;
  expect: 'holds' | 'fails' | null;
  shard: { index: number; count: number };
  wallMs: number;
  /** The campaign's command around `--runs N` (for the merged table's reproduce and "to conclude" lines). */
  reproduce: { before: string; after: string };
  /** The shard's result; `runs` are its own runs, `generated` the run indices generated (every shard's). */
  result: ServiceCampaignResult;
  /** An app's (`--app`): how its modules were loaded for the runs (RETRYSIM_APP_PER_PROCESS=1: once per simulated process). */
  moduleLoads?: 'once' | 'per-process';
  /**
   * Shard 1 of an app's campaign whose own runs did not fail: the campaign's first
   * runs again with one module load per simulated process (`check --app`'s
   * probe; they are shard 1's own runs). Merge adopts its failure when
   * every shard holds, as the unsharded check does.
   */
  moduleProbe?: { runs: number; result: ServiceCampaignResult };
  /**
   * An app's shard whose counterexample did not reproduce in a fresh
   * process (state carried over at module level from one run to the next):
   * why. Its `moduleProbe` failed and replays; when this shard's failure
   * is the campaign's first, that failure is the verdict, as in check.
   */
  notReproduced?: string;
}

const nat = natSchema;
// The result's fields merge reads are checked; the counterexample is carried through as written (printed, not re-run).
const resultSchema = z.looseObject({
  service: z.string(),
  module: z.string(),
  // Printed in words (keySourceWords): one merge does not know is refused, not printed raw.
  keySource: z.enum(KEY_SOURCES as [KeySource, ...KeySource[]]),
  seed: z.number().int(),
  explore: z.enum(['random', 'pct']),
  faults: z.array(z.string()),
  runs: nat,
  generated: nat.optional(),
  answers: z.strictObject({ succeeded: z.boolean(), others: z.array(nat) }).optional(),
  verdict: z.enum(['holds', 'fails', 'inconclusive']),
  inconclusive: z.string().optional(),
  firstFailureRun: z.number().int().positive().optional(),
  firstFailureMs: z.number().nonnegative().optional(),
  counterexample: z.looseObject({ size: z.looseObject({}), violations: z.array(z.looseObject({ invariant: z.string(), op: z.string(), detail: z.string() })), notMinimal: z.array(z.string()), replay: z.string() }).optional(),
  coverage: coverageSchema.optional(),
});
const fileSchema = z.strictObject({
  format: z.literal(SERVICE_SHARD_FORMAT),
  flag: z.enum(['--service', '--app']),
  atLeast: z.number().int().positive(),
  maxRuns: z.number().int().positive(),
  timeBudgetMs: z.number().positive().nullable(),
  expect: z.enum(['holds', 'fails']).nullable(),
  shard: shardOfSchema,
  wallMs: z.number().nonnegative(),
  reproduce: z.strictObject({ before: z.string(), after: z.string() }),
  result: resultSchema,
  moduleLoads: z.enum(['once', 'per-process']).optional(),
  moduleProbe: z.strictObject({ runs: z.number().int().positive(), result: resultSchema }).optional(),
  notReproduced: z.string().optional(),
}).refine(...shardIndexRule);

/** Parses and validates one service shard file (already known to carry {@link SERVICE_SHARD_FORMAT}); a {@link ShardError} names the file and the path. */
export function parseServiceShard(raw: unknown, source: string): ServiceShardFile {
  return parseShardAs<ServiceShardFile>(fileSchema, SERVICE_SHARD_FORMAT, raw, source);
}

/** The merged campaign: what the unsharded `check --service` would have said, and how to print it. */
export interface MergedServiceCampaign {
  result: ServiceCampaignResult;
  flag: '--service' | '--app';
  atLeast: number;
  timeBudgetMs: number | null;
  expect: 'holds' | 'fails' | null;
  wallMs: number;
  reproduce: { before: string; after: string };
  /** An app's: how its modules were loaded for the verdict (`per-process` when the probe's failure is the verdict). */
  moduleLoads?: 'once' | 'per-process';
  /** An app's probe, when the merged verdict is its (fails) or it ran on a holding one (shard 1's). */
  moduleProbe?: { runs: number; result: ServiceCampaignResult };
  /**
   * The probe's failure is the verdict: `shared`, the shards held only with
   * the app's modules loaded once; `carried`, the first failure did not
   * reproduce in a fresh process (state carried over between runs).
   */
  moduleState?: 'shared' | 'carried';
}

/**
 * Merges every shard of one service campaign. Refused (a {@link ShardError}
 * naming the file and the numbers): a shard missing or given twice, shards
 * of other campaigns (service, module, seed, runs, exploration, key source,
 * faults, budget, expectation), and counts no shard of `check` writes — a
 * shard without a failure ran exactly the indices it owns among those
 * generated (no more than the campaign's runs), a failure is at an index of
 * its own, and coverage counts no more runs than ran. The verdict: the
 * failure at the lowest run number (the one the unsharded campaign stops
 * at, shrunk the same way), else holds when the shards ran the runs a
 * verdict needs and some request succeeded, else inconclusive.
 */
export function mergeServiceShards(files: ReadonlyArray<{ source: string; file: ServiceShardFile }>): MergedServiceCampaign {
  const first = files[0]!;
  const key = (f: ServiceShardFile) => JSON.stringify([f.reproduce, f.flag, f.atLeast, f.maxRuns, f.timeBudgetMs, f.expect, f.shard.count, f.result.service, f.result.module, f.result.seed, f.result.explore, f.result.keySource, f.result.faults, f.moduleLoads ?? null]);
  const seen = new Map<number, string>();
  for (const { source, file } of files) {
    if (key(file) !== key(first.file)) throw new ShardError(`${source}: not the campaign of ${first.source} (service, module, seed, runs, exploration, key source, faults, budget, --expect and module loads must all match)`);
    const other = seen.get(file.shard.index);
    if (other !== undefined) throw new ShardError(`${source}: shard ${file.shard.index + 1}/${file.shard.count} is given twice (also ${other})`);
    seen.set(file.shard.index, source);
    consistent(source, file);
  }
  const count = first.file.shard.count;
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length > 0) throw new ShardError(`missing shard${missing.length === 1 ? '' : 's'} ${missing.map((i) => `${i + 1}/${count}`).join(', ')} of the campaign of ${first.source}`);
  const results = files.map((f) => f.file.result);
  // The campaign's own fields; the rest is the merge's to say.
  const { service, module, keySource, seed, explore, faults } = first.file.result;
  const base = { service, module, keySource, seed, explore, faults };
  const wallMs = Math.max(...files.map((f) => f.file.wallMs));
  const ctx = { flag: first.file.flag, atLeast: first.file.atLeast, timeBudgetMs: first.file.timeBudgetMs, expect: first.file.expect, wallMs, reproduce: first.file.reproduce, ...(first.file.moduleLoads !== undefined ? { moduleLoads: first.file.moduleLoads } : {}) };
  const failing = results.filter((r) => r.verdict === 'fails').sort((a, b) => a.firstFailureRun! - b.firstFailureRun!);
  if (failing.length > 0) {
    const f = failing[0]!;
    const from = files.find((x) => x.file.result === f)!;
    if (from.file.notReproduced !== undefined) {
      // check --app's verdict on a first failure that needed the state earlier runs left: the probe's.
      const probe = from.file.moduleProbe;
      if (probe?.result.verdict !== 'fails') throw new ShardError(`${from.source} (shard ${from.file.shard.index + 1}/${from.file.shard.count}): a counterexample that did not reproduce (${from.file.notReproduced}) without the failing per-process probe check writes beside it`);
      return { ...ctx, moduleLoads: 'per-process', moduleProbe: probe, moduleState: 'carried', result: probe.result };
    }
    return { ...ctx, result: { ...base, runs: f.firstFailureRun!, verdict: 'fails', firstFailureRun: f.firstFailureRun!, ...(f.firstFailureMs !== undefined ? { firstFailureMs: f.firstFailureMs } : {}), ...(f.counterexample ? { counterexample: f.counterexample } : {}) } };
  }
  const runs = results.reduce((n, r) => n + r.runs, 0);
  let coverage: Coverage | undefined;
  for (const r of results) coverage = mergeCoverage(coverage, r.coverage);
  const succeeded = results.some((r) => r.answers?.succeeded === true);
  const others = [...new Set(results.flatMap((r) => r.answers?.others ?? []))].sort((a, b) => a - b);
  const part = { ...base, runs, ...(coverage ? { coverage } : {}) };
  const budget = first.file.timeBudgetMs !== null && results.some((r) => r.inconclusive?.includes('time budget'));
  if (runs < first.file.atLeast) return { ...ctx, result: { ...part, verdict: 'inconclusive', inconclusive: `${runs} of ${first.file.atLeast} scenarios ran${budget ? ' (the time budget ran out)' : ''}` } };
  if (!succeeded) {
    const noun = results.map((r) => r.inconclusive).find((x) => x?.startsWith('no request')) ?? '';
    // The shards' own sentence, with the campaign's count.
    return { ...ctx, result: { ...part, verdict: 'inconclusive', inconclusive: noun.replace(/^no request of the \d+ runs/, `no request of the ${runs} runs`).replace(/\(answers: [^)]*\)/, `(answers: ${others.join(', ') || 'none'})`) } };
  }
  // An app held with its modules loaded once: shard 1 ran the campaign's first runs again with one load per
  // simulated process (check --app's probe), and its failure is the verdict, as in the unsharded check.
  if (first.file.flag === '--app' && first.file.moduleLoads !== 'per-process') {
    const zero = files.find((f) => f.file.shard.index === 0)!;
    const probe = zero.file.moduleProbe;
    if (probe === undefined) throw new ShardError(`${zero.source} (shard 1/${count}): an app's shard 1 without a failure carries no per-process module probe (written by an older retrysim, or edited): run it again`);
    if (probe.result.verdict === 'fails') return { ...ctx, moduleLoads: 'per-process', moduleProbe: probe, moduleState: 'shared', result: probe.result };
    // Shard 1 ran the campaign's first runs again after its own (carried-state.ts): answers that moved make the
    // campaign inconclusive, as unsharded (until 2026-12 a module-level rate limiter's campaign held when sharded).
    const carried = zero.file.result.verdict === 'inconclusive' ? zero.file.result.inconclusive : undefined;
    if (carried !== undefined && carried.includes('keeps state at module level')) return { ...ctx, moduleLoads: 'once', moduleProbe: probe, result: { ...part, verdict: 'inconclusive', inconclusive: carried } };
    return { ...ctx, moduleLoads: 'once', moduleProbe: probe, result: { ...part, verdict: 'holds' } };
  }
  return { ...ctx, result: { ...part, verdict: 'holds' } };
}

/** What {@link consistent} reads of a shard file: a service's or a client's (`check --client --shard`). */
export interface ShardCounts {
  maxRuns: number;
  timeBudgetMs: number | null;
  shard: { index: number; count: number };
  result: { verdict: string; runs: number; generated?: number; firstFailureRun?: number; counterexample?: unknown; coverage?: { rows: ReadonlyArray<{ id: string; runs: number }> } };
}

/** A shard's counts must be ones `check` writes: the numbers its own indices allow. */
export function consistent(source: string, f: ShardCounts): void {
  const r = f.result;
  const slice = { shard: f.shard.index, shards: f.shard.count, worker: 0, workers: 1 };
  const where = `${source} (shard ${f.shard.index + 1}/${f.shard.count})`;
  if (r.verdict === 'fails') {
    const run = r.firstFailureRun;
    if (run === undefined || run > f.maxRuns || !owns(slice, run - 1)) throw new ShardError(`${where}: a failure at run ${run ?? '?'} is not one of this shard's runs`);
    if (r.counterexample === undefined) throw new ShardError(`${where}: a failing shard without its counterexample`);
    return;
  }
  const generated = r.generated ?? 0;
  if (generated > f.maxRuns) throw new ShardError(`${where}: ${generated} runs generated, more than the campaign's ${f.maxRuns}`);
  if (f.timeBudgetMs === null && generated !== f.maxRuns) throw new ShardError(`${where}: ${generated} runs generated of the campaign's ${f.maxRuns}, without a time budget to stop it`);
  const own = ownedCount(slice, generated);
  if (r.runs !== own) throw new ShardError(`${where}: says it ran ${r.runs} runs, but it owns ${own} of the ${generated} generated`);
  for (const row of r.coverage?.rows ?? []) {
    if (row.runs > r.runs) throw new ShardError(`${where}: coverage counts ${row.runs} runs reaching '${row.id}', more than the ${r.runs} it ran`);
  }
}
