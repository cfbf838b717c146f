import { flags, intFlag, seedFlag, usage, UsageError, writableDir, writableFile } from './args.js';
import { availableParallelism } from 'node:os';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { claimById, CLAIMS, type Claim } from '../campaign/claims.js';
import { claimSeed, runJob, type CampaignJob } from '../campaign/job.js';
import { DEFAULT_SCHEDULES_MAX, runBounded, withBounded } from '../campaign/exhaustive.js';
import type { CampaignResult } from '../campaign/run.js';
import { CampaignPool } from '../campaign/pool.js';
import { workerBundle } from '../campaign/worker-bundle.js';
import { shardFile } from '../campaign/shard.js';
import { BUILTIN_SERVICES as VARIANTS } from '../tracker/builtin.js';
import { NIGHTLY_RUNS, printResults } from './check-report.js';
import { parseDuration, parseShard, shardFromEnv } from './shard-args.js';

/**
 * The main job's random campaign per claim (`npm start`): sized so the whole
 * default check — 18 claims, the holding ones also bounded-exhaustive —
 * fits in 20 s on two quiet cores. Every canary fails far below it (the
 * slowest by run 174 at seed 1); the long campaign is `--runs 100000`.
 */
const DEFAULT_RUNS = 3_000;
const DEFAULT_SCHEDULES = DEFAULT_SCHEDULES_MAX;
/** Seconds between progress lines when stderr is not a terminal. */
const PROGRESS_LINE_S = 5;
/**
 * New counterexamples land outside scenarios/ (every file there is replayed
 * by the test suite as a regression test): only a reviewed file, moved there
 * by hand, becomes one.
 */
const DEFAULT_FOUND = '.retrysim/found';

const HELP = `retrysim check [--variant V ...] [--claim ID ...] [--runs N] [--time-budget DURATION] [--shrink-budget D] [--seed S]
               [--explore random|pct|exhaustive] [--workers N] [--found DIR]
               [--shard I/N|auto --out FILE] [--unreduced] [--json] [--html DIR]

The property campaign. fast-check generates whole scenarios — operations,
workers, key source, faults (lost response, crash, slow processing, kill and
restart, pause past the lease, clock offset, two instances), timing and the
interleaving — runs each on the deterministic kernel against real SQLite,
and checks SPEC §5's invariants. Each claim is expected to hold (key_atomic
with fencing and a stable key) or to fail (the known-wrong variants: their
canaries prove the faults fire). A failure is shrunk to a minimal scenario
and written as a replayable file.

Without flags this is the main job (npm start; 7–14 s on two quiet cores, docs/main-job.md):
${DEFAULT_RUNS} generated scenarios per claim, and for every claim expected to
hold, first every schedule of its small scenarios (bounded-exhaustive,
sleep-set reduced). Each holding row then says both searches and the bound
reached, and a coverage table says which situations (faults fired at each
step, same-key overlaps, preemptions between steps, take-overs, replays,
recovery, time spans) how many runs reached. The long campaign is one flag
away: --runs ${NIGHTLY_RUNS} (the nightly / CI job; split it with --shard).

  --variant V        only claims about this write strategy (repeatable):
                     ${VARIANTS.join(', ')}
  --claim ID         only this claim (repeatable; ids as in --json, e.g.
                     key_atomic-tool_call-holds); with --variant, both must match
  --runs N           generated scenarios per claim (default ${DEFAULT_RUNS});
                     with --explore exhaustive: schedules per small scenario (default ${DEFAULT_SCHEDULES})
  --time-budget D    stop each claim after this long (e.g. 90s, 10m, 1h); with --runs N,
                     N runs at most; alone, as many runs as fit; either way a claim
                     that ran fewer than N (default ${DEFAULT_RUNS}) is inconclusive
  --shrink-budget D  a wall-clock limit on shrinking each failure (e.g. 90s, 10m); default none:
                     a claim's shrinking is bounded in runs only, so its counterexample is the same
                     on any machine, split or not. When it runs out, the case in hand is saved
                     (it replays) and said not known to be minimal (a ✗ row: not minimal)
  --seed S           the campaign seed (default: 1); each claim forks its own,
                     and run i of a claim is a function of that seed and i
  --explore M        random: fast-check-generated schedules (shrinkable, default),
                     plus the bounded-exhaustive search for holding claims
                     pct: probabilistic concurrency testing (depth 3, k fitted
                     to each scenario by a probe run)
                     exhaustive: every schedule of small scenarios of the claim's
                     fault space, one per class of schedules that differ only in
                     the order of steps that commute (sleep-set reduction)
  --workers N        threads sharing each claim's runs (default: CPU count);
                     verdicts, first failing runs and counterexamples do not depend on N
  --shard I/N        run only shard I of N of every claim's runs (1 <= I <= N);
                     shard 1 also runs the bounded-exhaustive part;
                     auto: from the environment (RETRYSIM_SHARD=I/N; GitLab
                     CI_NODE_INDEX/CI_NODE_TOTAL; CircleCI CIRCLE_NODE_INDEX/
                     CIRCLE_NODE_TOTAL; Buildkite BUILDKITE_PARALLEL_JOB/
                     BUILDKITE_PARALLEL_JOB_COUNT; Kubernetes Indexed Jobs
                     JOB_COMPLETION_INDEX with RETRYSIM_SHARDS=N)
  --out FILE         write this run's results for 'retrysim merge' (with --shard)
  --unreduced        with --explore exhaustive: also run the search without
                     reduction and show its schedule count beside (slow)
  --found DIR        where shrunk counterexamples go (default ${DEFAULT_FOUND}, git-ignored:
                     review one, then move it to scenarios/found/ to make it a regression test)
  --json             [{claim, variant, keySource, expected, invariant, ok, why, runs, asked,
                      verdict, shortfall, bounded, firstFailureRun, firstFailureMs,
                      counterexample, shrunkSize, violations, minimised, coverage, neverReached}]
  --html DIR         also write DIR/index.html and one stepper page per counterexample
  --service PATH     run the campaign against your own service instead (retrysim check --service PATH --help)
  --client PATH      run it on your own retry client instead (retrysim check --client PATH --help)
  --app PATH         run it against an unmodified Node app (its idempotency library included;
                     --app is --service for a module whose default export is an app descriptor)

A row is ✓ (JSON ok: true) when the verdict is the expected one, a canary
broke the invariant it names, and its counterexample is minimal (fewest
preemptions for its scenario, no removable operation, worker, fault or
attempt, and the shape the claim pins); ? when it is inconclusive — no
failure, but a time budget or the schedule limit stopped the search before
the runs or schedules asked (its lines say how to rerun and how to finish);
otherwise ✗ with the reasons (JSON why).
When stderr is not a terminal, a progress line is printed every ${PROGRESS_LINE_S} s.
With RETRYSIM_DEBUG=1 it also prints its memory use on stderr at the end (resident set at start and
end, peak), for measuring a long campaign.
Exit 0 when every row is ✓, 1 when a row is ✗, 4 when the only problem is an
inconclusive row, 2 for bad flags.`;

interface Parsed {
  claims: Claim[];
  /** Runs asked (schedules per scenario, exhaustive). */
  runs: number;
  /** A time budget without --runs: run until it ends; fewer than `runs` (the main job's) is inconclusive. */
  untilBudget: boolean;
  timeBudgetMs: number | undefined;
  /** Wall ms shrinking a claim's failure may take; undefined (the default here): run counts only. */
  shrinkBudgetMs: number | undefined;
  seed: number;
  explore: CampaignJob['explore'];
  workers: number;
  /** Claims were chosen by id (--claim): the reproduce line names them so. */
  byClaim: boolean;
  found: string;
  shard: { index: number; count: number } | undefined;
  out: string | undefined;
  json: boolean;
  html?: string;
  unreduced: boolean;
}

function parse(argv: string[]): Parsed | number {
  const a = flags('check', argv, {
    variant: { type: 'string', multiple: true },
    claim: { type: 'string', multiple: true },
    runs: { type: 'string' },
    'time-budget': { type: 'string' },
    'shrink-budget': { type: 'string' },
    seed: { type: 'string' },
    explore: { type: 'string' },
    workers: { type: 'string' },
    found: { type: 'string' },
    shard: { type: 'string' },
    out: { type: 'string' },
    json: { type: 'boolean' },
    html: { type: 'string' },
    unreduced: { type: 'boolean' },
  }, HELP);
  if (typeof a === 'number') return a;
  const v = a.values;
  const explore = v.explore ?? 'random';
  if (!['random', 'pct', 'exhaustive'].includes(explore)) throw new UsageError(`--explore must be random, pct or exhaustive, got '${explore}'`);
  if (v.unreduced === true && explore !== 'exhaustive') throw new UsageError('--unreduced needs --explore exhaustive');
  if (v.unreduced === true && explore !== 'exhaustive') throw new UsageError('--unreduced needs --explore exhaustive');
  const variants = v.variant ?? [];
  for (const x of variants) if (!(VARIANTS as readonly string[]).includes(x)) throw new UsageError(`unknown --variant '${x}'; variants: ${VARIANTS.join(', ')}`);
  const ids = v.claim ?? [];
  for (const x of ids) if (!CLAIMS.some((c) => c.id === x)) throw new UsageError(`unknown --claim '${x}'; claims: ${CLAIMS.map((c) => c.id).join(', ')}`);
  // --variant and --claim both narrow: a claim runs when it passes each filter given.
  const claims = CLAIMS.filter((c) => (variants.length === 0 || variants.includes(c.variant)) && (ids.length === 0 || ids.includes(c.id)));
  if (claims.length === 0) throw new UsageError(`no claim is about ${variants.map((x) => `--variant ${x}`).join(' or ')} and is one of ${ids.map((x) => `--claim ${x}`).join(', ')}`);
  const timeBudgetMs = v['time-budget'] === undefined ? undefined : parseDuration('time-budget', v['time-budget']);
  if (timeBudgetMs !== undefined && explore === 'exhaustive') throw new UsageError('--time-budget is for generated campaigns (random, pct), not --explore exhaustive');
  const shard = v.shard === undefined ? undefined : v.shard === 'auto' ? shardFromEnv(process.env) : parseShard(v.shard);
  if (shard !== undefined && explore === 'exhaustive') throw new UsageError('--shard splits generated campaigns (random, pct); --explore exhaustive is not sharded');
  if (shard !== undefined && v.out === undefined) throw new UsageError('--shard needs --out FILE (merge the shards with retrysim merge)');
  return {
    claims,
    byClaim: ids.length > 0,
    runs: intFlag('runs', v.runs, explore === 'exhaustive' ? DEFAULT_SCHEDULES : DEFAULT_RUNS, 1),
    untilBudget: timeBudgetMs !== undefined && v.runs === undefined,
    timeBudgetMs,
    shrinkBudgetMs: v['shrink-budget'] === undefined ? undefined : parseDuration('shrink-budget', v['shrink-budget']),
    seed: seedFlag(v.seed),
    explore: explore as Parsed['explore'],
    workers: intFlag('workers', v.workers, Math.max(1, availableParallelism()), 1),
    found: writableDir('found', v.found ?? DEFAULT_FOUND),
    shard,
    out: v.out === undefined ? undefined : writableFile('out', v.out),
    json: v.json === true,
    unreduced: v.unreduced === true,
    ...(v.html !== undefined ? { html: writableDir('html', v.html) } : {}),
  };
}

/** The worker threads' entry: a bundled file (fast start) or, failing that, the tsx entry. */
async function workerEntry(): Promise<{ file: string }> {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = join(here, '..', '..');
  const bundled = await workerBundle(root, 'check-worker', join(root, 'src', 'cli', 'check-worker.ts'));
  return { file: bundled ?? join(here, 'check-worker-entry.mjs') };
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  // A user's retry client has its own campaign (against a built-in variant or a --service): see check-client.ts.
  if (argv.some((x) => x === '--client' || x.startsWith('--client='))) return (await import('./check-client.js')).run(argv);
  // A user's service has its own campaign (no claims, one verdict): see check-service.ts.
  if (argv.some((x) => x === '--service' || x.startsWith('--service='))) return (await import('./check-service.js')).run(argv);
  return usage('check', async () => {
    const p = parse(argv);
    return typeof p === 'number' ? p : check(p);
  });
}

/** Progress for a person: bars on a terminal, otherwise a line every few seconds on stderr. */
function progress(p: Parsed) {
  const total = p.untilBudget ? 0 : p.runs;
  const bars = process.stderr.isTTY && !p.json
    ? new cliProgress.MultiBar({ format: ' {bar} {value}/{total} {claim}', hideCursor: true, clearOnComplete: true, stream: process.stderr }, cliProgress.Presets.shades_classic)
    : undefined;
  const barOf = new Map(p.claims.map((c) => [c.id, bars?.create(total, 0, { claim: c.id })]));
  const done = new Map<string, number>();
  let failures = 0;
  let current = '';
  let t0 = performance.now();
  const timer = bars === undefined
    ? setInterval(() => {
      const n = done.get(current) ?? 0;
      const s = (performance.now() - t0) / 1000;
      process.stderr.write(`check: ${current} ${n}${total ? `/${total}` : ''} runs, ${Math.round(n / Math.max(s, 1e-3))}/s, ${failures} claim(s) failing so far\n`);
    }, PROGRESS_LINE_S * 1000)
    : undefined;
  timer?.unref();
  return {
    start(claimId: string) {
      current = claimId;
      t0 = performance.now();
    },
    add(claimId: string, delta: number) {
      const n = (done.get(claimId) ?? 0) + delta;
      done.set(claimId, n);
      barOf.get(claimId)?.update(total ? Math.min(n, total) : n);
    },
    set(claimId: string, n: number) {
      this.add(claimId, n - (done.get(claimId) ?? 0));
    },
    finished(r: CampaignResult) {
      if (r.verdict === 'fails') failures++;
      barOf.get(r.claim.id)?.update(total || r.runs);
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      bars?.stop();
    },
  };
}

async function check(p: Parsed): Promise<number> {
  const slice = p.shard === undefined ? undefined : { shard: p.shard.index, shards: p.shard.count, worker: 0, workers: 1 };
  const jobs: CampaignJob[] = p.claims.map((c) => ({
    claimId: c.id, runs: p.runs, seed: p.seed, explore: p.explore, foundDir: p.found,
    ...(slice ? { slice } : {}),
    ...(p.timeBudgetMs !== undefined ? { timeBudgetMs: p.timeBudgetMs } : {}),
    ...(p.untilBudget ? { untilBudget: true } : {}),
    ...(p.unreduced ? { unreduced: true } : {}),
    ...(p.shrinkBudgetMs !== undefined ? { shrinkBudgetMs: p.shrinkBudgetMs } : {}),
  }));
  // The bounded-exhaustive part: holding claims of a random campaign, once per campaign (shard 1 of a sharded one).
  const bounded = (job: CampaignJob) => job.explore === 'random' && claimById(job.claimId).expected === 'holds' && (p.shard === undefined || p.shard.index === 0);
  const log = (s: string) => (p.json ? console.error(s) : console.log(s));
  const amount = p.untilBudget ? `as many scenarios as fit in ${p.timeBudgetMs! / 1000} s per claim (at least ${p.runs} to conclude)`
    : `${p.runs} ${p.explore === 'exhaustive' ? 'schedules max per small scenario' : 'scenarios per claim'}${p.timeBudgetMs === undefined ? '' : `, at most ${p.timeBudgetMs / 1000} s per claim`}`;
  const threads = p.explore === 'exhaustive' ? 1 : p.workers;
  const withBound = jobs.some(bounded) ? ', holding claims also bounded-exhaustive' : '';
  log(`retrysim check — seed ${p.seed}, ${p.claims.length} claim${p.claims.length === 1 ? '' : 's'}, ${amount}, explore ${p.explore}${withBound}, ${threads} thread(s)${p.shard ? `, shard ${p.shard.index + 1}/${p.shard.count}` : ''}`);
  const variants = p.claims.length === CLAIMS.length ? ''
    : p.byClaim ? p.claims.map((c) => ` --claim ${c.id}`).join('')
    : [...new Set(p.claims.map((c) => ` --variant ${c.variant}`))].join('');
  // With a time budget the runs done are known only afterwards: each claim's own reproduce line follows the table.
  if (p.timeBudgetMs === undefined) log(`reproduce: retrysim check --seed ${p.seed} --runs ${p.runs} --explore ${p.explore}${variants}`);
  const prog = progress(p);
  const rssStartMb = Math.round(process.memoryUsage().rss / 1e6);
  const t0 = performance.now();
  const clock = () => performance.now();
  const pool = threads > 1 ? new CampaignPool(await workerEntry(), threads) : new CampaignPool(undefined, 1);
  const results: CampaignResult[] = [];
  try {
    for (const job of jobs) {
      prog.start(job.claimId);
      let r: CampaignResult;
      if (job.explore === 'exhaustive') r = await runJob(job, clock, (n) => prog.set(job.claimId, n));
      else if (bounded(job)) {
        const b = await runBounded({ claim: claimById(job.claimId), seed: claimSeed(job.seed, job.claimId), foundDir: job.foundDir, clockMs: clock, ...(job.shrinkBudgetMs !== undefined ? { shrinkBudgetMs: job.shrinkBudgetMs } : {}) });
        // An exhaustive failure decides the claim: no random campaign after it.
        r = withBounded(b, b.result.verdict === 'fails' ? undefined : await pool.run(job, clock, (d) => prog.add(job.claimId, d)));
      } else r = await pool.run(job, clock, (d) => prog.add(job.claimId, d));
      prog.finished(r);
      results.push(r);
    }
  } finally {
    prog.stop();
    await pool.close();
  }
  const wallMs = performance.now() - t0;
  // A diagnostic for whoever measures the campaign (bench/check.bench.ts, bench/scale.bench.ts), not part of
  // the verdict: printed only under RETRYSIM_DEBUG=1, the CLI's diagnostics switch. Worker threads share this
  // process, so these cover the whole campaign.
  if (process.env.RETRYSIM_DEBUG === '1') console.error(`memory: rss ${rssStartMb} MB at start, ${Math.round(process.memoryUsage().rss / 1e6)} MB at end, peak ${Math.round(process.resourceUsage().maxRSS / 1e3)} MB`);
  if (p.html !== undefined) {
    const pages = await (await import('../report/html/check-pages.js')).writeCheckPages(p.html, results);
    console.error(`wrote ${pages.length - 1} counterexample page(s) and ${join(p.html, 'index.html')}`);
  }
  if (p.out !== undefined) {
    const f = shardFile({
      seed: p.seed, runs: p.runs, ...(p.untilBudget ? { untilBudget: true } : {}), explore: p.explore as 'random' | 'pct', timeBudgetMs: p.timeBudgetMs ?? null,
      shard: p.shard ?? { index: 0, count: 1 }, wallMs: Math.round(wallMs),
    }, results);
    writeFileSync(p.out, JSON.stringify(f, null, 1) + '\n');
    log(`results written to ${p.out}${p.shard ? ` (shard ${p.shard.index + 1}/${p.shard.count}: merge every shard's file with retrysim merge)` : ''}`);
  }
  const code = printResults(results, { seed: p.seed, explore: p.explore, json: p.json, wallMs, ...(p.shard !== undefined ? { shard: p.shard } : {}) });
  if (p.timeBudgetMs !== undefined) {
    // Run i is a function of (seed, claim, i): --runs <runs done> reruns exactly what the budget allowed.
    for (const r of results) {
      log(r.runs > 0
        ? `reproduce ${r.claim.id}: retrysim check --seed ${p.seed} --claim ${r.claim.id} --runs ${r.firstFailureRun ?? r.runs} --explore ${p.explore}`
        : `reproduce ${r.claim.id}: nothing ran within the budget; retrysim check --seed ${p.seed} --claim ${r.claim.id} --runs ${p.runs} --explore ${p.explore}`);
    }
  }
  if (p.shard !== undefined) {
    // A shard's canaries may not fail within its slice: verdicts are merge's to give.
    log(`shard ${p.shard.index + 1}/${p.shard.count}: verdicts above cover this shard's runs only; retrysim merge gives the campaign's (exit 0: the shard ran)`);
    return 0;
  }
  return code;
}
