import { exploreAll } from '../sim/explore/exhaustive.js';
import { ListChoice } from '../sim/choice/list.js';
import { runScenario } from '../scenario/run.js';
import type { Claim } from './claims.js';
import { smallScenarios } from './small.js';
import { failsFor, minimiseAndSave, withModule, type CampaignResult } from './run.js';

/**
 * Bounded exhaustive exploration of a claim: every schedule of each of its
 * small scenarios, up to reordering steps that commute (sleep-set
 * partial-order reduction over the footprints the tracker, network and
 * clients declare; `reduce: false` turns it off). Verdict `fails` at the
 * first violating schedule, which is minimised and saved like a shrunk
 * counterexample; `holds` when every schedule of every small scenario keeps
 * the invariants. `runs` counts the schedules run (with reduction, one per
 * class of equivalent schedules); with `unreduced`, the same search is
 * repeated without reduction and its count reported beside it.
 */
export async function runExhaustive(o: {
  claim: Claim;
  seed: number;
  schedulesMax?: number;
  foundDir?: string;
  clockMs?: () => number;
  onProgress?: (done: number) => void;
  /** Partial-order reduction (default true). */
  reduce?: boolean;
  /** Also count schedules without reduction, until the same verdict (slow: that is the point). */
  unreduced?: boolean;
  /** Run the claim's built-in as the service module at this path (loaded beforehand): the parity suite. */
  module?: string;
}): Promise<CampaignResult> {
  const reduce = o.reduce ?? true;
  const result = await exhaustive(o, reduce);
  if (!reduce || !o.unreduced) return result;
  const plain = await exhaustive({ ...o, foundDir: undefined }, false, true);
  return { ...result, reduction: { ...result.reduction!, unreduced: plain.runs, unreducedComplete: plain.complete === true } };
}

async function exhaustive(
  o: { claim: Claim; seed: number; schedulesMax?: number; foundDir?: string; clockMs?: () => number; onProgress?: (done: number) => void; module?: string },
  reduce: boolean,
  countOnly = false,
): Promise<CampaignResult> {
  const clock = o.clockMs ?? (() => 0);
  const t0 = clock();
  let schedules = 0;
  let blocked = 0;
  let complete = true;
  const fails = failsFor(o.claim);
  for (const s of smallScenarios(o.claim)) {
    const scenario = withModule({ ...s, seed: o.seed }, o.module);
    const e = await exploreAll((choices) => runScenario(scenario, { choices }), {
      schedulesMax: o.schedulesMax ?? 20_000,
      reduce,
      keep: fails,
      onSchedule: (x) => {
        o.onProgress?.(schedules + x.index + 1);
        return !fails(x.result); // stop at the first failing schedule
      },
    });
    schedules += e.schedules;
    blocked += e.blocked;
    // Complete only when every schedule of every small scenario ran: a
    // failure stops the enumeration early, and so does the schedule limit.
    complete &&= e.complete;
    const failing = e.results[0];
    const reduction = reduce ? { blocked } : undefined;
    if (failing && countOnly) return { claim: o.claim, seed: o.seed, runs: schedules, verdict: 'fails', shrinks: 0, complete };
    if (failing) {
      const firstFailureMs = clock() - t0;
      // The first failing leaf in depth-first order is arbitrary; the
      // minimiser turns it into the failing schedule with the fewest
      // preemptions (and drops what the failure does not need).
      const counterexample = await minimiseAndSave({ scenario, choices: failing.choices }, o.claim, o.seed, new ListChoice(failing.choices), o.foundDir);
      return { claim: o.claim, seed: o.seed, runs: schedules, verdict: 'fails', firstFailureMs, shrinks: 0, counterexample, complete, ...(reduction ? { reduction } : {}) };
    }
  }
  return { claim: o.claim, seed: o.seed, runs: schedules, verdict: 'holds', shrinks: 0, complete, ...(reduce ? { reduction: { blocked } } : {}) };
}
