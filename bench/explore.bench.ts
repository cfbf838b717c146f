/**
 * `npm run bench -- explore`: what partial-order reduction and PCT buy.
 * - explore.race: the key_split race (its claim's small scenario): schedules
 *   with and without sleep-set reduction, and whether both reach the same outcomes.
 * - explore.holdsEverywhere: key_atomic's holding claims on every schedule of
 *   all their small scenarios, reduced (the ≤ 10 s figure) beside unreduced.
 * - explore.pctDepth2: PCT runs to the first hit of a depth-2 bug (a lost
 *   update past decision 45, and the key_split race) beside 1/bound.
 */
import { CLAIMS, claimById } from '../src/campaign/claims.js';
import { smallScenarios } from '../src/campaign/small.js';
import { runExhaustive } from '../src/campaign/exhaustive.js';
import { campaignPct, pctStepsEstimate, CAMPAIGN_PCT_DEPTH } from '../src/campaign/pct.js';
import { exploreAll } from '../src/sim/explore/exhaustive.js';
import { Kernel } from '../src/sim/kernel.js';
import { PctChoice } from '../src/sim/choice/pct.js';
import { PctProbe } from '../src/sim/choice/pct-probe.js';
import type { ChoiceSource } from '../src/sim/choice/source.js';
import { runScenario, type ScenarioRun } from '../src/scenario/run.js';
import type { Scenario } from '../src/scenario/schema.js';
import { storeOn } from '../src/tracker/store.js';

const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const outcome = (r: ScenarioRun, rows: unknown) => JSON.stringify([r.reports, r.violations.map((v) => `${v.invariant}/${v.op}: ${v.detail}`).sort(), rows]);

async function explore(s: Scenario, reduce: boolean) {
  const seen = new Set<string>();
  const t0 = process.hrtime.bigint();
  const e = await exploreAll(async (choices) => {
    let rows: unknown;
    const r = await runScenario(s, { choices, inspect: (db) => (rows = [storeOn(db).allReports(), storeOn(db).keyRows()]) });
    seen.add(outcome(r, rows));
    return r;
  }, { schedulesMax: 100_000, keep: () => false, reduce });
  return { schedules: e.schedules, blocked: e.blocked, complete: e.complete, outcomes: seen, ms: ms(t0) };
}

/** Two tasks, 45 steps each, then read / yield / write a shared counter: a lost update is a depth-2 bug past decision 45. */
async function lateLostUpdate(choices: ChoiceSource): Promise<boolean> {
  const k = new Kernel({ seed: 1, choices, trace: false });
  let counter = 0;
  for (const name of ['t0', 't1']) {
    k.spawn(name, async () => {
      for (let i = 0; i < 45; i++) await k.yield(`pre${i}`);
      await k.yield('read');
      const seen = counter;
      await k.yield('write');
      counter = seen + 1;
    });
  }
  await k.run();
  return counter < 2;
}

/** Runs to the first hit for each seed offset, and the median. */
async function runsToFind(hit: (seed: number) => Promise<boolean>, trials: number, cap: number): Promise<{ median: number; found: number; values: number[] }> {
  const values: number[] = [];
  for (let t = 0; t < trials; t++) {
    let n = 0;
    while (n < cap && !(await hit(t * cap + n))) n++;
    values.push(n + 1);
  }
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)]!, found: values.filter((v) => v <= cap).length, values };
}

export default async function exploreBench(): Promise<void> {
  const race = smallScenarios(claimById('key_split-tool_call-race-fails'))[0]!;
  {
    const reduced = await explore(race, true);
    const full = await explore(race, false);
    const same = reduced.outcomes.size === full.outcomes.size && [...reduced.outcomes].every((o) => full.outcomes.has(o));
    console.log(JSON.stringify({ bench: 'explore.race', scenario: race.name, schedulesReduced: reduced.schedules, blocked: reduced.blocked, schedulesUnreduced: full.schedules, ratio: +(full.schedules / reduced.schedules).toFixed(0), outcomes: full.outcomes.size, sameOutcomes: same, msReduced: Math.round(reduced.ms), msUnreduced: Math.round(full.ms) }));
  }
  {
    const holding = CLAIMS.filter((c) => c.expected === 'holds');
    const t0 = process.hrtime.bigint();
    const rs = [];
    for (const claim of holding) rs.push(await runExhaustive({ claim, seed: 1, schedulesMax: 100_000 }));
    const reducedMs = ms(t0);
    const t1 = process.hrtime.bigint();
    const plain = [];
    for (const claim of holding) plain.push(await runExhaustive({ claim, seed: 1, schedulesMax: 100_000, reduce: false }));
    const unreducedMs = ms(t1);
    console.log(JSON.stringify({
      bench: 'explore.holdsEverywhere', claims: holding.map((c) => c.id), smallScenarios: holding.reduce((n, c) => n + smallScenarios(c).length, 0),
      verdicts: rs.map((r) => `${r.verdict}${r.complete ? ' (complete)' : ''}`), schedulesReduced: rs.reduce((n, r) => n + r.runs, 0), blocked: rs.reduce((n, r) => n + (r.reduction?.blocked ?? 0), 0),
      seconds: +(reducedMs / 1000).toFixed(2), schedulesUnreduced: plain.reduce((n, r) => n + r.runs, 0), secondsUnreduced: +(unreducedMs / 1000).toFixed(2), speedup: +(unreducedMs / reducedMs).toFixed(1),
    }));
  }
  {
    // Depth-2 bug past decision 45: PCT at depth 2 with k from the probe, beside the bound 1/(n·k).
    const probe = new PctProbe();
    await lateLostUpdate(probe);
    const k = pctStepsEstimate(probe.steps);
    const n = 2;
    const d2 = await runsToFind((seed) => lateLostUpdate(new PctChoice({ seed, depth: 2, stepsEstimate: k })), 41, 5000);
    const campaign = await runsToFind((seed) => lateLostUpdate(campaignPct(seed, probe.steps)), 41, 5000);
    const fixed40 = await runsToFind((seed) => lateLostUpdate(new PctChoice({ seed, depth: 3, stepsEstimate: 40 })), 3, 2000);
    console.log(JSON.stringify({ bench: 'explore.pctDepth2.lateLostUpdate', n, k, boundRate: +(1 / (n * k)).toFixed(5), runsAtBound: n * k, medianRunsDepth2: d2.median, medianRunsCampaignDepth3: campaign.median, campaignBoundRuns: n * k ** (CAMPAIGN_PCT_DEPTH - 1), foundWithFixedK40: `${fixed40.found}/3 within 2000 runs` }));
  }
  {
    // The key_split race scenario: n = 4 tasks (two clients, two requests).
    const probe = new PctProbe();
    await runScenario(race, { choices: probe });
    const k = pctStepsEstimate(probe.steps);
    const hit = async (src: ChoiceSource) => (await runScenario(race, { choices: src })).violations.length > 0;
    const d2 = await runsToFind((seed) => hit(new PctChoice({ seed, depth: 2, stepsEstimate: k })), 41, 2000);
    const campaign = await runsToFind((seed) => hit(campaignPct(seed, probe.steps)), 41, 2000);
    const old = await runsToFind((seed) => hit(new PctChoice({ seed, depth: 3, stepsEstimate: 40 })), 41, 2000);
    console.log(JSON.stringify({ bench: 'explore.pctDepth2.keySplitRace', n: 4, k, boundRate: +(1 / (4 * k)).toFixed(5), runsAtBound: 4 * k, medianRunsDepth2: d2.median, medianRunsCampaign: campaign.median, medianRunsFixedK40: old.median }));
  }
}
