import { Prng } from '../random/prng.js';
import { campaignPct } from './pct.js';
import { claimById } from './claims.js';
import { runCampaign, scanRuns, type CampaignOptions, type CampaignResult, type ExploreMode, type ScanResult } from './run.js';
import { runExhaustive } from './exhaustive.js';
import { WHOLE, type Slice } from './runs.js';
import { addCounts, type CoverageCounts } from './coverage.js';

/** One claim's campaign, as sent to a worker thread (plain data only). */
export interface CampaignJob {
  claimId: string;
  /** Runs asked (schedules per small scenario, exhaustive). */
  runs: number;
  /** With `timeBudgetMs`: go on past `runs` until the budget ends. */
  untilBudget?: boolean;
  /** The campaign's one seed; the claim's own seed is forked from it. */
  seed: number;
  explore: ExploreMode | 'exhaustive';
  foundDir?: string;
  /** The run indices of this job (a shard of the campaign); default all. */
  slice?: Slice;
  /** Stop once this much wall time has passed (then fewer than `runs` is inconclusive). */
  timeBudgetMs?: number;
  /** Exhaustive mode: also count schedules without partial-order reduction. */
  unreduced?: boolean;
  /** Wall ms shrinking a failure may take (`--shrink-budget`); default none: run counts only. */
  shrinkBudgetMs?: number;
}

/**
 * The claim's seed: forked from the campaign seed by claim id, so a claim's
 * verdict does not depend on which other claims run, in which order, or on
 * how many worker threads share the work.
 */
export function claimSeed(seed: number, claimId: string): number {
  return new Prng(seed).fork(claimId).nextU32();
}

/** The campaign options of a job (plain data in, the claim and its seed resolved). */
export function optionsOf(job: CampaignJob, clockMs: () => number, onProgress?: (done: number) => void): CampaignOptions {
  if (job.explore === 'exhaustive') throw new Error('optionsOf: exhaustive jobs are not generated campaigns');
  return {
    claim: claimById(job.claimId),
    runs: job.runs,
    seed: claimSeed(job.seed, job.claimId),
    explore: job.explore,
    ...(job.foundDir !== undefined ? { foundDir: job.foundDir } : {}),
    ...(job.slice !== undefined ? { slice: job.slice } : {}),
    ...(job.timeBudgetMs !== undefined ? { timeBudgetMs: job.timeBudgetMs } : {}),
    ...(job.untilBudget ? { untilBudget: true } : {}),
    ...(job.shrinkBudgetMs !== undefined ? { shrinkBudgetMs: job.shrinkBudgetMs } : {}),
    clockMs,
    ...(onProgress ? { onProgress } : {}),
    pct: campaignPct,
  };
}

/** Runs one job in this thread; `clockMs` is the caller's wall clock (for time-to-first-failure). */
export async function runJob(job: CampaignJob, clockMs: () => number, onProgress?: (done: number) => void): Promise<CampaignResult> {
  if (job.explore === 'exhaustive') {
    const claim = claimById(job.claimId);
    return runExhaustive({ claim, seed: claimSeed(job.seed, job.claimId), schedulesMax: job.runs, foundDir: job.foundDir, clockMs, onProgress, unreduced: job.unreduced, ...(job.shrinkBudgetMs !== undefined ? { shrinkBudgetMs: job.shrinkBudgetMs } : {}) });
  }
  return runCampaign(optionsOf(job, clockMs, onProgress));
}

/**
 * One thread's share of a job: the job's slice cut again into `workers`
 * parts, scanned in order. `best` is shared by all threads of the job (an
 * Int32Array over a SharedArrayBuffer holding the lowest failing index found
 * so far): a thread stops before any index above it, since a lower failure
 * decides the claim. Returns what this share found.
 */
export async function scanShare(job: CampaignJob, worker: number, workers: number, best: Int32Array, clockMs: () => number, onProgress?: (done: number) => void): Promise<ScanResult> {
  const o = optionsOf(job, clockMs, onProgress);
  const base = job.slice ?? WHOLE;
  const r = await scanRuns({
    ...o,
    slice: { ...base, worker, workers },
    stopBefore: (i) => i > Atomics.load(best, 0),
    ...(job.timeBudgetMs !== undefined ? { deadlineMs: clockMs() + job.timeBudgetMs, ...(job.untilBudget ? { runs: Infinity } : {}) } : {}),
  });
  if (r.firstFailure !== undefined) lowerTo(best, r.firstFailure);
  return r;
}

/** Atomically lowers `best[0]` to `v` if `v` is lower (there is no Atomics.min). */
export function lowerTo(best: Int32Array, v: number): void {
  for (let cur = Atomics.load(best, 0); v < cur; cur = Atomics.load(best, 0)) {
    if (Atomics.compareExchange(best, 0, cur, v) === cur) return;
  }
}

/** Combines the scans of a job's threads: the lowest failure decides; evaluated runs add up. */
export function mergeScans(scans: readonly ScanResult[]): ScanResult {
  let first: ScanResult | undefined;
  for (const s of scans) if (s.firstFailure !== undefined && (first === undefined || s.firstFailure < first.firstFailure!)) first = s;
  const evaluated = scans.reduce((n, s) => n + s.evaluated, 0);
  if (first === undefined) return { evaluated, coverage: scans.reduce((c, s) => addCounts(c, s.coverage), {} as CoverageCounts) };
  return { evaluated, firstFailure: first.firstFailure!, ...(first.firstFailureMs !== undefined ? { firstFailureMs: first.firstFailureMs } : {}), ...(first.error !== undefined ? { error: first.error } : {}) };
}
