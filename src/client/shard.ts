import { z } from 'zod';
import { mergeCoverage, type Coverage } from '../campaign/coverage.js';
import { neverSucceeded } from './coverage.js';
import { coverageSchema, natSchema, parseShardAs, ShardError, shardIndexRule, shardOfSchema } from '../campaign/shard.js';
import { consistent } from '../service/shard.js';
import type { ClientCampaignResult, ClientCounterexample } from './campaign.js';

/** The format of a `check --client --shard I/N --out FILE` result file. */
export const CLIENT_SHARD_FORMAT = 'retrysim.client-shard/1';

/** What a shard file keeps of a counterexample: the printed parts (the scenario is in the counterexample's own file). */
export type ShardClientCounterexample = Omit<ClientCounterexample, 'scenario' | 'run'> & { run: { workers: Array<Pick<ClientCounterexample['run']['workers'][number], 'name' | 'sent'>> } };

/** A client campaign's result as a shard file holds it. */
export type ShardClientResult = Omit<ClientCampaignResult, 'counterexample'> & { counterexample?: ShardClientCounterexample };

/** What one shard of a client campaign ran and found, and the campaign it belongs to. */
export interface ClientShardFile {
  format: typeof CLIENT_SHARD_FORMAT;
  /** The client's module, as given to `--client`. */
  module: string;
  /** What the client ran against, in the header's words (`built-in key_atomic`, `service NAME (PATH)`). */
  against: string;
  /**
   * The campaign's command line without `--shard`, `--out`, `--found`,
   * `--html` and `--json`: the same for every shard of one campaign, and
   * what the merged result's "to conclude" line starts from.
   */
  command: string[];
  /** Scenarios a holding verdict needs (`--runs`, or its default under a budget alone). */
  atLeast: number;
  /** At most this many run indices (the campaign's `--runs`, or unbounded under a budget alone). */
  maxRuns: number;
  timeBudgetMs: number | null;
  expect: 'holds' | 'fails' | null;
  shard: { index: number; count: number };
  wallMs: number;
  /** The shard's result; `runs` are its own runs, `generated` the run indices generated (every shard's). */
  result: ShardClientResult;
  /** Present when the shard ran with one load of the client's module per simulated client process (RETRYSIM_APP_PER_PROCESS=1); absent: once. */
  moduleLoads?: 'per-process';
  /**
   * Shard 1 of a once-loaded campaign whose own runs did not fail: the
   * campaign's first runs again with one load of the client's module per
   * simulated client process (`check --client`'s probe; they are shard 1's
   * own runs, dealt in blocks of 64). Merge adopts its failure when every
   * shard holds, as the unsharded check does.
   */
  moduleProbe?: { runs: number; result: ShardClientResult };
}

/** The shard file's form of a result: the counterexample without its scenario, and of its run only the requests each worker sent (what the table prints). */
export function clientShardResult(r: ClientCampaignResult): ShardClientResult {
  if (r.counterexample === undefined) return r;
  const { scenario: _s, run, ...cx } = r.counterexample;
  return { ...r, counterexample: { ...cx, run: { workers: run.workers.map((w) => ({ name: w.name, sent: w.sent.map(({ headers: _h, ...q }) => q) })) } } };
}

const nat = natSchema;
// The fields merge reads are checked; the counterexample is carried through as written (printed, not re-run).
const resultSchema = z.looseObject({
  client: z.string(),
  seed: z.number().int(),
  explore: z.enum(['random', 'pct']),
  faults: z.array(z.string()),
  runs: nat,
  generated: nat.optional(),
  verdict: z.enum(['holds', 'fails', 'inconclusive']),
  inconclusive: z.string().optional(),
  firstFailureRun: z.number().int().positive().optional(),
  firstFailureMs: z.number().nonnegative().optional(),
  counterexample: z.looseObject({
    size: z.looseObject({}),
    violations: z.array(z.looseObject({ invariant: z.string(), op: z.string(), detail: z.string() })),
    notMinimal: z.array(z.string()),
    minimised: z.looseObject({}),
    replay: z.string(),
    run: z.strictObject({ workers: z.array(z.strictObject({ name: z.string(), sent: z.array(z.looseObject({ atMs: z.number(), method: z.string(), path: z.string() })) })) }),
  }).optional(),
  coverage: coverageSchema.optional(),
  firstAnswer: z.string().max(400).optional(),
});
const fileSchema = z.strictObject({
  format: z.literal(CLIENT_SHARD_FORMAT),
  module: z.string(),
  against: z.string(),
  command: z.array(z.string()),
  atLeast: z.number().int().positive(),
  maxRuns: z.number().int().positive(),
  timeBudgetMs: z.number().positive().nullable(),
  expect: z.enum(['holds', 'fails']).nullable(),
  shard: shardOfSchema,
  wallMs: z.number().nonnegative(),
  result: resultSchema,
  moduleLoads: z.literal('per-process').optional(),
  moduleProbe: z.strictObject({ runs: z.number().int().positive(), result: resultSchema }).optional(),
}).refine(...shardIndexRule);

/** Parses and validates one client shard file (already known to carry {@link CLIENT_SHARD_FORMAT}); a {@link ShardError} names the file and the path. */
export function parseClientShard(raw: unknown, source: string): ClientShardFile {
  return parseShardAs<ClientShardFile>(fileSchema, CLIENT_SHARD_FORMAT, raw, source);
}

/** The merged client campaign: what the unsharded `check --client` would have said, and how to print it. */
export interface MergedClientCampaign {
  result: ShardClientResult;
  module: string;
  against: string;
  command: string[];
  atLeast: number;
  timeBudgetMs: number | null;
  expect: 'holds' | 'fails' | null;
  wallMs: number;
  /** How the client's module was loaded for the verdict's runs: per-process under RETRYSIM_APP_PER_PROCESS=1, or when shard 1's probe failed. */
  moduleLoads: 'once' | 'per-process';
  /** Shard 1's per-process probe, when its failure is the verdict (the line check prints says why). */
  moduleProbe?: { runs: number; result: ShardClientResult };
}

/**
 * Merges every shard of one client campaign, as service shards merge.
 * Refused (a {@link ShardError} naming the file and the numbers): a shard
 * missing or given twice, shards of other campaigns (client, target,
 * command line, seed, runs, exploration, faults, budget, expectation), and
 * counts no shard of `check --client` writes (see the service's). The
 * verdict: the failure at the lowest run number (the one the unsharded
 * campaign stops at, shrunk the same way), else holds when the shards ran
 * the runs a verdict needs, else inconclusive.
 */
export function mergeClientShards(files: ReadonlyArray<{ source: string; file: ClientShardFile }>): MergedClientCampaign {
  const first = files[0]!;
  const key = (f: ClientShardFile) => JSON.stringify([f.module, f.against, f.command, f.atLeast, f.maxRuns, f.timeBudgetMs, f.expect, f.shard.count, f.result.client, f.result.seed, f.result.explore, f.result.faults, f.moduleLoads ?? 'once']);
  const seen = new Map<number, string>();
  for (const { source, file } of files) {
    if (key(file) !== key(first.file)) throw new ShardError(`${source}: not the campaign of ${first.source} (client, target, seed, runs, exploration, faults, budget, --expect and module loads must all match)`);
    const other = seen.get(file.shard.index);
    if (other !== undefined) throw new ShardError(`${source}: shard ${file.shard.index + 1}/${file.shard.count} is given twice (also ${other})`);
    seen.set(file.shard.index, source);
    consistent(source, file);
  }
  const count = first.file.shard.count;
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length > 0) throw new ShardError(`missing shard${missing.length === 1 ? '' : 's'} ${missing.map((i) => `${i + 1}/${count}`).join(', ')} of the campaign of ${first.source}`);
  const results = files.map((f) => f.file.result);
  const { client, seed, explore, faults } = first.file.result;
  const base = { client, seed, explore, faults };
  const f0 = first.file;
  const ctx = { module: f0.module, against: f0.against, command: f0.command, atLeast: f0.atLeast, timeBudgetMs: f0.timeBudgetMs, expect: f0.expect, wallMs: Math.max(...files.map((f) => f.file.wallMs)), moduleLoads: f0.moduleLoads ?? ('once' as const) };
  const failing = results.filter((r) => r.verdict === 'fails').sort((a, b) => a.firstFailureRun! - b.firstFailureRun!);
  if (failing.length > 0) {
    const f = failing[0]!;
    return { ...ctx, result: { ...base, runs: f.firstFailureRun!, verdict: 'fails', firstFailureRun: f.firstFailureRun!, ...(f.firstFailureMs !== undefined ? { firstFailureMs: f.firstFailureMs } : {}), ...(f.counterexample ? { counterexample: f.counterexample } : {}) } };
  }
  const runs = results.reduce((n, r) => n + r.runs, 0);
  const generated = Math.max(...results.map((r) => r.generated ?? 0));
  let coverage: Coverage | undefined;
  for (const r of results) coverage = mergeCoverage(coverage, r.coverage);
  const part = { ...base, runs, generated, ...(coverage ? { coverage } : {}) };
  const budget = f0.timeBudgetMs !== null && results.some((r) => r.inconclusive?.includes('time budget'));
  if (runs < f0.atLeast) return { ...ctx, result: { ...part, verdict: 'inconclusive', inconclusive: `${runs} of ${f0.atLeast} scenarios ran${budget ? ' (the time budget ran out)' : ''}` } };
  // As unsharded: no request of any shard's runs answered 2xx says nothing (a shard alone may have had none).
  // The answer the lowest shard saw first (shard 1 owns run 1: the one the unsharded campaign quotes).
  const firstAnswer = [...files].sort((a, b) => a.file.shard.index - b.file.shard.index).map((f) => f.file.result.firstAnswer).find((x) => x !== undefined);
  const vacuous = neverSucceeded(coverage, 'runs', firstAnswer);
  if (vacuous !== undefined) return { ...ctx, result: { ...part, verdict: 'inconclusive', inconclusive: vacuous, ...(firstAnswer !== undefined ? { firstAnswer } : {}) } };
  // Held with the client's module loaded once: shard 1 ran the campaign's first runs again with one load per
  // simulated client process (check --client's probe), and its failure is the verdict, as in the unsharded check.
  if (f0.moduleLoads !== 'per-process') {
    const zero = files.find((f) => f.file.shard.index === 0)!;
    const probe = zero.file.moduleProbe;
    if (probe === undefined) throw new ShardError(`${zero.source} (shard 1/${count}): a client's shard 1 without a failure carries no per-process module probe (written by an older retrysim, or edited): run it again`);
    if (probe.result.verdict === 'fails') return { ...ctx, moduleLoads: 'per-process', moduleProbe: probe, result: probe.result };
  }
  return { ...ctx, result: { ...part, verdict: 'holds' } };
}
