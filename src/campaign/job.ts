import { Prng } from '../random/prng.js';
import { campaignPct } from './pct.js';
import { claimById } from './claims.js';
import { runCampaign, type CampaignResult, type ExploreMode } from './run.js';
import { runExhaustive } from './exhaustive.js';

/** One claim's campaign, as sent to a worker thread (plain data only). */
export interface CampaignJob {
  claimId: string;
  runs: number;
  /** The campaign's one seed; the claim's own seed is forked from it. */
  seed: number;
  explore: ExploreMode | 'exhaustive';
  foundDir?: string;
  /** Exhaustive mode: also count schedules without partial-order reduction. */
  unreduced?: boolean;
}

/**
 * The claim's seed: forked from the campaign seed by claim id, so a claim's
 * verdict does not depend on which other claims run, in which order, or on
 * how many worker threads share the work.
 */
export function claimSeed(seed: number, claimId: string): number {
  return new Prng(seed).fork(claimId).nextU32();
}

/** Runs one job; `clockMs` is the caller's wall clock (for time-to-first-failure). */
export async function runJob(job: CampaignJob, clockMs: () => number, onProgress?: (done: number) => void): Promise<CampaignResult> {
  const claim = claimById(job.claimId);
  const seed = claimSeed(job.seed, job.claimId);
  if (job.explore === 'exhaustive') {
    return runExhaustive({ claim, seed, schedulesMax: job.runs, foundDir: job.foundDir, clockMs, onProgress, unreduced: job.unreduced });
  }
  return runCampaign({
    claim,
    runs: job.runs,
    seed,
    explore: job.explore,
    foundDir: job.foundDir,
    clockMs,
    onProgress,
    pct: campaignPct,
  });
}
