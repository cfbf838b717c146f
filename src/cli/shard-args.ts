import { UsageError } from './args.js';

/** A duration flag: `500ms`, `90s`, `10m`, `1h` or plain seconds; a {@link UsageError} naming the flag otherwise. */
export function parseDuration(flag: string, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(raw.trim());
  const n = m ? Number(m[1]) : NaN;
  const ms = n * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const)[(m?.[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  if (!(Number.isFinite(ms) && ms > 0 && ms <= 7 * 86_400_000)) {
    throw new UsageError(`--${flag} must be a duration such as 90s, 10m or 1h (more than 0, at most a week), got '${raw}'`);
  }
  return ms;
}

/**
 * How long shrinking a failure may take unless told (`--shrink-budget` of
 * `check --service/--app/--client`): a run of a slow service costs up to
 * seconds, and the minimiser's budget is counted in thousands of runs.
 */
export const DEFAULT_SHRINK_BUDGET = '60s';

/** `--shard I/N` (1-based, as printed) as a 0-based index and the count; a {@link UsageError} otherwise. */
export function parseShard(raw: string): { index: number; count: number } {
  const m = /^(\d+)\/(\d+)$/.exec(raw);
  const i = m ? Number(m[1]) : NaN;
  const n = m ? Number(m[2]) : NaN;
  if (!(Number.isSafeInteger(i) && Number.isSafeInteger(n) && i >= 1 && i <= n)) throw new UsageError(`--shard must be I/N with 1 <= I <= N (or auto), got '${raw}'`);
  return { index: i - 1, count: n };
}

/** Environment variables that name a shard, 0- or 1-based, in the order they are tried. */
const ENV_SHARDS: ReadonlyArray<{ index: string; count: string; base: 0 | 1; who: string }> = [
  { index: 'CI_NODE_INDEX', count: 'CI_NODE_TOTAL', base: 1, who: 'GitLab CI parallel' },
  { index: 'CIRCLE_NODE_INDEX', count: 'CIRCLE_NODE_TOTAL', base: 0, who: 'CircleCI parallelism' },
  { index: 'BUILDKITE_PARALLEL_JOB', count: 'BUILDKITE_PARALLEL_JOB_COUNT', base: 0, who: 'Buildkite parallelism' },
  { index: 'JOB_COMPLETION_INDEX', count: 'RETRYSIM_SHARDS', base: 0, who: 'a Kubernetes Indexed Job' },
];

/**
 * `--shard auto`: the shard from the environment a CI matrix or a
 * Kubernetes Indexed Job sets. `RETRYSIM_SHARD=I/N` (1-based) wins; GitHub
 * Actions sets no such variables, so a matrix there passes
 * `RETRYSIM_SHARD: ${{ matrix.shard }}/N` itself. Returns a 0-based index.
 */
export function shardFromEnv(env: NodeJS.ProcessEnv): { index: number; count: number } {
  const own = env.RETRYSIM_SHARD;
  if (own !== undefined) {
    const m = /^(\d+)\/(\d+)$/.exec(own);
    if (!m || Number(m[1]) < 1 || Number(m[1]) > Number(m[2])) throw new UsageError(`RETRYSIM_SHARD must be I/N with 1 <= I <= N, got '${own}'`);
    return { index: Number(m[1]) - 1, count: Number(m[2]) };
  }
  for (const e of ENV_SHARDS) {
    const i = env[e.index];
    const n = env[e.count];
    if (i === undefined) continue;
    const index = Number(i) - e.base;
    const count = Number(n);
    if (!(/^\d+$/.test(i) && n !== undefined && /^\d+$/.test(n) && index >= 0 && index < count)) {
      throw new UsageError(`--shard auto: ${e.index}=${JSON.stringify(i)} and ${e.count}=${JSON.stringify(n)} (${e.who}) do not name a shard`);
    }
    return { index, count };
  }
  throw new UsageError(`--shard auto found no shard in the environment: set RETRYSIM_SHARD=I/N, or run under ${ENV_SHARDS.map((e) => `${e.index}/${e.count}`).join(', ')}`);
}

/**
 * `--json`'s `shard` of one shard's report: which one, and that its exit code is 0 once it ran (merge gives
 * the campaign's). `ok: false` beside exit 0 read as a disagreement (a CI job per shard went green on a ✗).
 */
/** The last line of one shard's report (check --service/--app/--client): what its verdict covers, and its exit code. */
export function shardRanLine(shard: { index: number; count: number }): string {
  return `shard ${shard.index + 1}/${shard.count}: the verdict above covers this shard's runs only; retrysim merge gives the campaign's (exit 0: the shard ran)`;
}

export function shardJson(shard: { index: number; count: number } | undefined): Record<string, unknown> {
  return shard === undefined ? {} : { shard: { index: shard.index + 1, count: shard.count, exitCode: 0, covers: "this shard's runs only: retrysim merge of every shard's --out file gives the campaign's verdict and exit code" } };
}
