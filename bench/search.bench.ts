import { claimById } from '../src/campaign/claims.js';
import { runCampaign } from '../src/campaign/run.js';
import { runJob } from '../src/campaign/job.js';
import { simplifications } from '../src/campaign/minimise.js';
import { runScenario } from '../src/scenario/run.js';
import { searchBounded } from '../src/sim/explore/bounded.js';

const clock = () => performance.now();
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/**
 * Search quality (issue #10): the key_split pure-concurrency race on seeds
 * 1..20 — found K/20, runs and wall time to the first failure, wall time to
 * the shrunk counterexample, and how many shrunk counterexamples have exactly
 * one preemption and no removable operation, worker, fault or attempt
 * (checked here independently of the minimiser: every one-step
 * simplification is searched again and must not fail). Then the planted
 * check-then-act race (key_atomic_racy_claim) under each exploration mode.
 */
export default async function searchBench(): Promise<void> {
  const claim = claimById('key_split-tool_call-race-fails');
  // One warm-up campaign so the first seed does not pay for JIT compilation.
  await runCampaign({ claim, runs: 3000, seed: 1000 });
  const runsToFail: number[] = [];
  const msToFail: number[] = [];
  const msToShrunk: number[] = [];
  let found = 0;
  let onePreemption = 0;
  let nothingRemovable = 0;
  for (let seed = 1; seed <= 20; seed++) {
    const t0 = clock();
    const r = await runCampaign({ claim, runs: 3000, seed, clockMs: clock });
    const ms = clock() - t0;
    if (r.verdict !== 'fails' || !r.counterexample) continue;
    found++;
    runsToFail.push(r.firstFailureRun ?? NaN);
    msToFail.push(r.firstFailureMs ?? NaN);
    msToShrunk.push(ms);
    const cx = r.counterexample;
    if (cx.size.preemptions === 1) onePreemption++;
    let removable = false;
    for (const s of simplifications(cx.scenario)) {
      const hit = await searchBounded((c) => runScenario(s.scenario, { choices: c }), (x) => x.violations.some((v) => v.invariant === 'exactly-one'), { preemptionsMax: cx.size.preemptions, runsMax: 5000 });
      if (hit.best || !hit.complete) removable = true;
    }
    if (!removable) nothingRemovable++;
  }
  console.log(JSON.stringify({
    bench: 'search.keySplitRace',
    seeds: 20,
    found: `${found}/20`,
    medianRunsToFirstFailure: median(runsToFail),
    maxRunsToFirstFailure: Math.max(...runsToFail),
    medianMsToFirstFailure: +median(msToFail).toFixed(1),
    medianMsToShrunkCounterexample: +median(msToShrunk).toFixed(1),
    onePreemption: `${onePreemption}/20`,
    noRemovableOperationFaultOrAttempt: `${nothingRemovable}/20`,
    targets: { found: '20/20', medianRunsToFirstFailure: 20, medianMsToShrunkCounterexample: 50, onePreemption: '20/20' },
  }));
  for (const explore of ['random', 'pct', 'exhaustive'] as const) {
    const t0 = clock();
    const r = await runJob({ claimId: 'key_atomic_racy_claim-tool_call-fails', runs: explore === 'exhaustive' ? 20_000 : 100_000, seed: 1, explore }, clock);
    console.log(JSON.stringify({
      bench: 'search.plantedCheckThenAct',
      explore,
      verdict: r.verdict,
      runsToFirstFailure: r.firstFailureRun ?? r.runs,
      msToFirstFailure: r.firstFailureMs === undefined ? null : +r.firstFailureMs.toFixed(1),
      msToShrunkCounterexample: +(clock() - t0).toFixed(1),
      shrunkTo: r.counterexample?.size ?? null,
    }));
  }
}
