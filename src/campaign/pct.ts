import { PctChoice } from '../sim/choice/pct.js';

/** Bug depth the campaign's PCT schedules aim at: d = 3 places two change points (and still finds depth-2 bugs). */
export const CAMPAIGN_PCT_DEPTH = 3;

/**
 * k for a case whose probe ({@link PctProbe}) counted `probeSteps`. PCT's
 * bound 1/(n·k^(d−1)) holds only when k is at least the run's length in
 * decisions. Over 3,600 PCT runs of every claim's generated cases the probe
 * was exceeded once, by one decision; the margin covers that.
 */
export function pctStepsEstimate(probeSteps: number): number {
  return probeSteps + 2;
}

/**
 * The PCT source of one campaign case: depth {@link CAMPAIGN_PCT_DEPTH},
 * k fitted to the case ({@link pctStepsEstimate}). The campaign used a fixed
 * k = 40 before: several times the length of a typical case (a typical
 * race case makes ~11 decisions, so about four times fewer hits at depth 2),
 * and shorter than long cases, whose late steps no change point could reach.
 */
export function campaignPct(seed: number, probeSteps: number): PctChoice {
  return new PctChoice({ seed, depth: CAMPAIGN_PCT_DEPTH, stepsEstimate: pctStepsEstimate(probeSteps) });
}
