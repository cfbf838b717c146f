import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scenarioArbitrary, scenarioSize, type GeneratedCase } from '../scenario/arbitraries.js';
import { runScenario, type ScenarioRun } from '../scenario/run.js';
import { printScenario } from '../scenario/load.js';
import type { Scenario } from '../scenario/schema.js';
import { ListChoice } from '../sim/choice/list.js';
import { PctProbe } from '../sim/choice/pct-probe.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { hashJson } from '../sim/canonical.js';
import { openStore, type Store } from '../tracker/store.js';
import type { Claim, MinimalShape } from './claims.js';
import { minimiseCounterexample, type Minimised } from './minimise.js';
import type { Invariant } from '../checkers/invariants.js';

/** How schedules are chosen in a campaign. */
export type ExploreMode = 'random' | 'pct';

/** Options of {@link runCampaign}. */
export interface CampaignOptions {
  claim: Claim;
  runs: number;
  seed: number;
  explore?: ExploreMode;
  /** Where to write the shrunk counterexample; undefined: do not write. */
  foundDir?: string;
  /** Called after every generated scenario. */
  onProgress?: (done: number) => void;
  /** Measures elapsed ms (injected: simulated code never reads real time). */
  clockMs?: () => number;
  /**
   * Builds the PCT choice source for one case (injected to keep this file
   * free of the PCT module's options). `probeSteps` measures the case by a
   * probe run ({@link PctProbe}), so the source can fit its step estimate k
   * to the case (see `campaignPct`).
   */
  pct?: (seed: number, probeSteps: number) => ChoiceSource;
  /** How a generated choice list drives the kernel (default {@link ListChoice}); tests swap it to show what the default buys. */
  listSource?: (list: readonly number[]) => ChoiceSource;
  /** Run {@link minimiseCounterexample} after fast-check's shrinking (default true). */
  minimise?: boolean;
}

/** A shrunk, replayable counterexample. */
export interface Counterexample {
  scenario: Scenario;
  /** Where it was written, if it was. */
  file?: string;
  size: ReturnType<typeof scenarioSize>;
  violations: ScenarioRun['violations'];
  /** The command that replays it. */
  replay: string;
  /** Problems with the minimal shape the claim demands (empty: minimal). */
  notMinimal: string[];
  /** What the post-shrink pass did (undefined when it did not run, e.g. exhaustive mode before its own search). */
  minimised?: Pick<Minimised, 'preemptionsMinimal' | 'removed' | 'undecided' | 'runs'>;
}

/** What one claim's campaign found: verdict, runs, time to first failure and the shrunk counterexample. */
export interface CampaignResult {
  claim: Claim;
  seed: number;
  runs: number;
  verdict: 'holds' | 'fails';
  /** Wall time until the first failing scenario was found (before shrinking). */
  firstFailureMs?: number;
  shrinks: number;
  counterexample?: Counterexample;
  /** fast-check's own replay line: seed and path. */
  fastCheck: { seed: number; path?: string };
  /** An exception escaped a run (a model bug or a limit), with its message. */
  error?: string;
  /** Exhaustive mode: every schedule of every small scenario was run. */
  complete?: boolean;
  /**
   * Exhaustive mode with partial-order reduction: runs abandoned part-way as
   * reorderings of explored ones (`blocked`), and, when asked for, the
   * schedules the same search runs without reduction (`unreduced`, complete
   * or stopped by the limit).
   */
  reduction?: { blocked: number; unreduced?: number; unreducedComplete?: boolean };
}

/** Scenario runs fast-check may spend shrinking a failure before {@link minimiseCounterexample} takes over. */
export const SHRINK_RUNS_MAX = 40;

/** What counts as a failure of this claim: its named invariant for a canary, any violation for a claim that should hold. */
export function failsFor(claim: Claim): (r: ScenarioRun) => boolean {
  if (claim.expected === 'holds') return (r) => r.violations.length > 0;
  const named = claim.violation ?? 'exactly-one';
  return (r) => r.violations.some((v) => v.invariant === named);
}

async function choicesFor(c: GeneratedCase, explore: ExploreMode, store: Store, pct?: CampaignOptions['pct'], list?: (l: readonly number[]) => ChoiceSource): Promise<ChoiceSource> {
  if (explore === 'pct') {
    if (!pct) throw new Error('explore=pct needs a pct factory');
    // PCT's guarantee needs k, the run's length in decisions; a fixed guess
    // is too long for most cases (fewer hits) and too short for some (no
    // change point can reach their late steps), so each case is measured.
    const probe = new PctProbe();
    await runScenario(c.scenario, { choices: probe, store });
    return pct(c.scenario.seed, probe.steps);
  }
  return list ? list(c.choices) : new ListChoice(c.choices);
}

/** Checks a shrunk counterexample against the claim's minimal shape. */
export function minimalityProblems(shape: MinimalShape | undefined, size: Counterexample['size']): string[] {
  if (!shape) return [];
  const p: string[] = [];
  if (size.operations !== shape.operations) p.push(`operations ${size.operations}, expected ${shape.operations}`);
  if (shape.preemptions !== undefined && size.preemptions !== shape.preemptions) p.push(`preemptions ${size.preemptions}, expected ${shape.preemptions}`);
  if (shape.workers !== undefined && size.workers !== shape.workers) p.push(`workers ${size.workers}, expected ${shape.workers}`);
  if (size.faults > shape.faultsMax) p.push(`faults ${size.faults}, expected at most ${shape.faultsMax}`);
  if (shape.attempts !== undefined && size.attempts !== shape.attempts) p.push(`attempts ${size.attempts}, expected ${shape.attempts}`);
  return p;
}

/**
 * Runs one claim as a fast-check property over generated scenarios and
 * schedules. A failure is shrunk (scenario and schedule together), re-run to
 * record its exact schedule, and written as a scenario file whose `expect`
 * is the violation, replayable with `retrysim replay`.
 */
export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const explore = o.explore ?? 'random';
  const clock = o.clockMs ?? (() => 0);
  const store: Store = openStore(':memory:');
  const t0 = clock();
  let done = 0;
  let firstFailureMs: number | undefined;
  try {
    const arb = scenarioArbitrary({ variant: o.claim.variant, keySource: o.claim.keySource, faults: o.claim.faults });
    // A canary looks for the invariant it names (SPEC §5: it counts only when
    // it breaks that one); a claim that should hold fails on any violation.
    const fails = failsFor(o.claim);
    let shrinkRuns = 0;
    const prop = fc.asyncProperty(arb, async (c) => {
      // fast-check shrinks greedily over every field, one run per candidate;
      // past a fixed budget (a count, so results never depend on machine
      // speed) candidates are passed over unrun and minimiseCounterexample
      // finishes the job in the dimensions that matter.
      if (firstFailureMs !== undefined && ++shrinkRuns > SHRINK_RUNS_MAX) return true;
      const r = await runScenario(c.scenario, { choices: await choicesFor(c, explore, store, o.pct, o.listSource), store });
      if (firstFailureMs === undefined) o.onProgress?.(++done);
      if (fails(r)) {
        firstFailureMs ??= clock() - t0;
        return false;
      }
      return true;
    });
    const details = await fc.check(prop, { numRuns: o.runs, seed: o.seed });
    const base = { claim: o.claim, seed: o.seed, runs: details.numRuns, shrinks: details.numShrinks, fastCheck: { seed: details.seed, path: details.counterexamplePath ?? undefined } };
    if (!details.failed) return { ...base, verdict: 'holds' };
    const [c] = details.counterexample as [GeneratedCase];
    if (details.errorInstance && !(details.errorInstance instanceof Error && /Property failed by returning false/.test(details.errorInstance.message))) {
      return { ...base, verdict: 'fails', firstFailureMs, error: String((details.errorInstance as Error).message ?? details.errorInstance) };
    }
    const counterexample = o.minimise === false
      ? await saveCounterexample(c, o.claim, o.seed, ((s) => () => s)(await choicesFor(c, explore, store, o.pct, o.listSource)), store, o.foundDir)
      : await minimiseAndSave(c, o.claim, o.seed, await choicesFor(c, explore, store, o.pct, o.listSource), store, o.foundDir);
    return { ...base, verdict: 'fails', firstFailureMs, counterexample };
  } finally {
    store.close();
  }
}

/**
 * The invariant a claim's counterexample should keep breaking while it is
 * minimised: the claim's named one when this failure breaks it, otherwise
 * whichever it breaks (an unexpected failure of a holding claim).
 */
export function targetInvariant(claim: Claim, run: ScenarioRun): Invariant | undefined {
  const named = claim.violation ?? 'exactly-one';
  return run.violations.some((v) => v.invariant === named) ? named : undefined;
}

/**
 * Takes a failing case (as fast-check shrank it, or as exhaustive or PCT
 * exploration found it), records the schedule it actually ran, minimises it
 * ({@link minimiseCounterexample}: fewest preemptions, then no removable
 * operation, worker, fault, instance or attempt) and saves it.
 */
export async function minimiseAndSave(c: GeneratedCase, claim: Claim, seed: number, choices: ChoiceSource, store: Store, foundDir: string | undefined): Promise<Counterexample> {
  const first = await runScenario(c.scenario, { choices, store });
  const target = targetInvariant(claim, first);
  const isHit = (r: ScenarioRun) => (target === undefined ? r.violations.length > 0 : r.violations.some((v) => v.invariant === target));
  const m = await minimiseCounterexample(c.scenario, first.result.choices.map((x) => x.chosen), { isHit, store });
  const cx = await saveCounterexample({ scenario: m.scenario, choices: m.choices }, claim, seed, () => new ListChoice(m.choices), store, foundDir);
  cx.minimised = { preemptionsMinimal: m.preemptionsMinimal, removed: m.removed, undecided: m.undecided, runs: m.runs };
  if (!m.preemptionsMinimal) cx.notMinimal.push(`preemptions ${m.preemptions}: the schedule search ran out of runs before it could show fewer do not fail`);
  for (const u of m.undecided) cx.notMinimal.push(`not shown necessary (search ran out of runs): ${u}`);
  return cx;
}

/**
 * Re-runs a failing case to record its exact schedule, and writes it (when
 * `foundDir` is given) as a scenario file whose `expect` is the violation.
 */
export async function saveCounterexample(
  c: GeneratedCase,
  claim: Claim,
  seed: number,
  choices: () => ChoiceSource,
  store: Store,
  foundDir: string | undefined,
): Promise<Counterexample> {
  const o = { claim, seed, foundDir };
  const run = await runScenario(c.scenario, { choices: choices(), store });
  const invariants = [...new Set(run.violations.map((v) => v.invariant))].sort();
  const scenario: Scenario = {
    ...c.scenario,
    name: `${o.claim.id}: shrunk counterexample`,
    description: `Found by retrysim check (claim ${claim.id}, claim seed ${seed}): ${run.violations.map((v) => `${v.invariant} — ${v.detail}`).join('; ')}.`,
    schedule: run.result.choices.map((x) => ({ t: x.t, chosen: x.chosen, of: [...x.of], preempted: x.preempted })),
    expect: { reports: run.reports, violations: invariants },
  };
  const attempts = run.operations.reduce((n, op) => n + op.attempts.length, 0);
  const size = scenarioSize(scenario, attempts);
  let file: string | undefined;
  if (o.foundDir !== undefined) {
    mkdirSync(o.foundDir, { recursive: true });
    const broken = o.claim.violation !== undefined && invariants.includes(o.claim.violation) ? o.claim.violation : invariants[0] ?? 'violation';
    file = join(o.foundDir, `${o.claim.variant}-${broken}-${hashJson(scenario).slice(0, 8)}.json`);
    writeFileSync(file, printScenario(scenario));
  }
  return {
    scenario,
    ...(file !== undefined ? { file } : {}),
    size,
    violations: run.violations,
    replay: file !== undefined ? `retrysim replay ${file} --trace` : '(not written: pass a found directory)',
    notMinimal: minimalityProblems(o.claim.minimal, size),
  };
}
