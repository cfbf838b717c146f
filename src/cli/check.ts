import { flags, intFlag, seedFlag, usage, UsageError, writableDir } from './args.js';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { CLAIMS, type Claim } from '../campaign/claims.js';
import { runJob, type CampaignJob } from '../campaign/job.js';
import type { CampaignResult } from '../campaign/run.js';
import { VARIANTS } from '../tracker/strategy.js';
import { textTable } from '../report/table.js';

const DEFAULT_RUNS = 100_000; // about half a minute on two idle cores, a minute when busy
const DEFAULT_SCHEDULES = 20_000;
/**
 * New counterexamples land outside scenarios/ (every file there is replayed
 * by the test suite as a regression test): only a reviewed file, moved there
 * by hand, becomes one.
 */
const DEFAULT_FOUND = '.retrysim/found';

const HELP = `retrysim check [--variant V ...] [--runs N] [--seed S] [--explore random|pct|exhaustive]
               [--workers N] [--found DIR] [--json]

The property campaign. fast-check generates whole scenarios — operations,
workers, key source, faults (lost response, crash, slow processing, kill and
restart, pause past the lease, clock offset, two instances), timing and the
interleaving — runs each on the deterministic kernel against real SQLite,
and checks SPEC §5's invariants. Each claim is expected to hold (key_atomic
with fencing and a stable key) or to fail (the known-wrong variants: their
canaries prove the faults fire). A failure is shrunk to a minimal scenario
and written as a replayable file.

  --variant V     only claims about this write strategy (repeatable):
                  ${VARIANTS.join(', ')}
  --runs N        generated scenarios per claim (default ${DEFAULT_RUNS});
                  with --explore exhaustive: schedules per small scenario (default ${DEFAULT_SCHEDULES})
  --seed S        the campaign seed (default: 1); each claim forks its own
  --explore M     random: fast-check-generated schedules (shrinkable, default)
                  pct: probabilistic concurrency testing (depth 3)
                  exhaustive: every schedule of small two-worker scenarios
  --workers N     worker threads (default: CPU count); verdicts do not depend on N
  --found DIR     where shrunk counterexamples go (default ${DEFAULT_FOUND}, git-ignored:
                  review one, then move it to scenarios/found/ to make it a regression test)
  --json          [{claim, variant, keySource, expected, runs, verdict, firstFailureMs, counterexample}]

Exit 0 when every claim's verdict is the expected one, 1 otherwise, 2 for bad flags.`;

interface Parsed {
  claims: Claim[];
  runs: number;
  seed: number;
  explore: CampaignJob['explore'];
  workers: number;
  found: string;
  json: boolean;
}

function parse(argv: string[]): Parsed | number {
  const a = flags('check', argv, {
    variant: { type: 'string', multiple: true },
    runs: { type: 'string' },
    seed: { type: 'string' },
    explore: { type: 'string' },
    workers: { type: 'string' },
    found: { type: 'string' },
    json: { type: 'boolean' },
  }, HELP);
  if (typeof a === 'number') return a;
  const v = a.values;
  const explore = v.explore ?? 'random';
  if (!['random', 'pct', 'exhaustive'].includes(explore)) throw new UsageError(`--explore must be random, pct or exhaustive, got '${explore}'`);
  const variants = v.variant ?? [];
  for (const x of variants) if (!(VARIANTS as readonly string[]).includes(x)) throw new UsageError(`unknown --variant '${x}'; variants: ${VARIANTS.join(', ')}`);
  return {
    claims: variants.length === 0 ? [...CLAIMS] : CLAIMS.filter((c) => variants.includes(c.variant)),
    runs: intFlag('runs', v.runs, explore === 'exhaustive' ? DEFAULT_SCHEDULES : DEFAULT_RUNS, 1),
    seed: seedFlag(v.seed),
    explore: explore as Parsed['explore'],
    workers: intFlag('workers', v.workers, Math.max(1, availableParallelism()), 1),
    found: writableDir('found', v.found ?? DEFAULT_FOUND),
    json: v.json === true,
  };
}

/** Runs the jobs over `workers` threads (in-process when 1); results come back in claim order. */
async function runJobs(jobs: CampaignJob[], workers: number, onProgress: (claimId: string, done: number) => void, onResult: (r: CampaignResult) => void): Promise<CampaignResult[]> {
  const clock = () => performance.now();
  const results = new Map<string, CampaignResult>();
  if (workers <= 1 || jobs.length <= 1) {
    for (const job of jobs) {
      const r = await runJob(job, clock, (d) => onProgress(job.claimId, d));
      results.set(job.claimId, r);
      onResult(r);
    }
  } else {
    // Claims are dealt round-robin; each runs whole inside one worker, so the
    // split cannot change a verdict.
    const n = Math.min(workers, jobs.length);
    const shares = Array.from({ length: n }, (_, i) => jobs.filter((_, j) => j % n === i));
    const entry = fileURLToPath(new URL('./check-worker-entry.mjs', import.meta.url));
    await Promise.all(shares.map((share) => new Promise<void>((resolve, reject) => {
      const w = new Worker(entry, { workerData: share });
      w.on('message', (m: { type: 'progress'; claimId: string; done: number } | { type: 'result'; result: CampaignResult }) => {
        if (m.type === 'progress') onProgress(m.claimId, m.done);
        else {
          results.set(m.result.claim.id, m.result);
          onResult(m.result);
        }
      });
      w.on('error', reject);
      w.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`campaign worker exited with code ${code}`))));
    })));
  }
  return jobs.map((j) => results.get(j.claimId)!);
}

function sizeText(r: CampaignResult): string {
  const s = r.counterexample?.size;
  if (!s) return '-';
  return `${s.operations} op, ${s.workers} worker${s.workers === 1 ? '' : 's'}, ${s.faults} fault${s.faults === 1 ? '' : 's'}, ${s.attempts} attempts${s.instances > 1 ? `, ${s.instances} instances` : ''}`;
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  return usage('check', async () => {
    const p = parse(argv);
    return typeof p === 'number' ? p : check(p);
  });
}

async function check(p: Parsed): Promise<number> {
  const jobs: CampaignJob[] = p.claims.map((c) => ({ claimId: c.id, runs: p.runs, seed: p.seed, explore: p.explore, foundDir: p.found }));
  const log = (s: string) => (p.json ? console.error(s) : console.log(s));
  log(`retrysim check — seed ${p.seed}, ${p.claims.length} claims, ${p.runs} ${p.explore === 'exhaustive' ? 'schedules max per small scenario' : 'scenarios per claim'}, explore ${p.explore}, ${Math.min(p.workers, jobs.length)} worker(s)`);
  log(`reproduce: retrysim check --seed ${p.seed} --runs ${p.runs} --explore ${p.explore}${p.claims.length < CLAIMS.length ? p.claims.map((c) => ` --variant ${c.variant}`).filter((v, i, a) => a.indexOf(v) === i).join('') : ''}`);
  const bars = process.stderr.isTTY && !p.json
    ? new cliProgress.MultiBar({ format: ' {bar} {value}/{total} {claim}', hideCursor: true, clearOnComplete: true, stream: process.stderr }, cliProgress.Presets.shades_classic)
    : undefined;
  const barOf = new Map(p.claims.map((c) => [c.id, bars?.create(p.runs, 0, { claim: c.id })]));
  const rssStartMb = Math.round(process.memoryUsage().rss / 1e6);
  const t0 = performance.now();
  const results = await runJobs(jobs, p.workers, (id, done) => barOf.get(id)?.update(Math.min(done, p.runs)), (r) => barOf.get(r.claim.id)?.update(p.runs));
  bars?.stop();
  const wallMs = performance.now() - t0;
  // Worker threads share this process, so these cover the whole campaign.
  console.error(`memory: rss ${rssStartMb} MB at start, ${Math.round(process.memoryUsage().rss / 1e6)} MB at end, peak ${Math.round(process.resourceUsage().maxRSS / 1e3)} MB`);
  const ok = results.every((r) => r.verdict === r.claim.expected && !r.error && (r.counterexample?.notMinimal.length ?? 0) === 0);
  if (p.json) {
    console.log(JSON.stringify(results.map((r) => ({
      claim: r.claim.id,
      variant: r.claim.variant,
      keySource: r.claim.keySource,
      expected: r.claim.expected,
      runs: r.runs,
      ...(r.complete !== undefined ? { complete: r.complete } : {}),
      verdict: r.verdict,
      firstFailureMs: r.firstFailureMs === undefined ? null : Math.round(r.firstFailureMs),
      counterexample: r.counterexample?.file ?? null,
      shrunkSize: r.counterexample?.size ?? null,
      ...(r.error ? { error: r.error } : {}),
    }))));
    return ok ? 0 : 1;
  }
  console.log('');
  console.log(textTable(['', 'variant / key source', 'claim', 'runs', 'verdict', 'first failure', p.explore === 'random' ? 'shrunk to' : 'counterexample size', 'counterexample'], results.map((r) => [
    r.verdict === r.claim.expected && !r.error ? '✓' : '✗',
    `${r.claim.variant} / ${r.claim.keySource}`,
    r.claim.id.replace(`${r.claim.variant}-${r.claim.keySource}-`, '').replace(`${r.claim.variant}-`, ''),
    r.complete === true && r.verdict === 'holds' ? `${r.runs} (all)` : r.runs,
    r.verdict,
    r.firstFailureMs === undefined ? '-' : `${Math.round(r.firstFailureMs)} ms`,
    sizeText(r),
    r.counterexample?.file ?? '-',
  ])));
  console.log(`\n${results.length} claims in ${(wallMs / 1000).toFixed(1)} s. "fails" is expected of the known-wrong variants: their canaries show the faults fire.`);
  for (const r of results) {
    const bad = r.verdict !== r.claim.expected || r.error || (r.counterexample?.notMinimal.length ?? 0) > 0;
    if (!bad) continue;
    console.log(`\n✗ ${r.claim.id}: ${r.claim.title}`);
    if (r.error) console.log(`  an exception escaped a run: ${r.error}`);
    if (r.verdict !== r.claim.expected) console.log(`  expected it to ${r.claim.expected === 'holds' ? 'hold' : 'fail'}, but it ${r.verdict === 'holds' ? 'held' : 'failed'}`);
    for (const v of r.counterexample?.violations ?? []) console.log(`  ${v.invariant} (${v.op}): ${v.detail}`);
    if (r.counterexample?.notMinimal.length) console.log(`  shrunk counterexample is not minimal: ${r.counterexample.notMinimal.join('; ')}`);
    console.log(`  seed ${p.seed} (claim seed ${r.seed}), fast-check path ${r.fastCheck.path ?? '-'}`);
    if (r.counterexample) console.log(`  replay: ${r.counterexample.replay}`);
  }
  return ok ? 0 : 1;
}
