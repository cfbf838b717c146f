import { scheduleOf } from '../scenario/record.js';
import { shellArg } from '../report/shell.js';
import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scenarioArbitrary, scenarioSize, type GeneratedCase } from '../scenario/arbitraries.js';
import { caseAt, nextOwned, ownedCount, WHOLE, type Slice } from './runs.js';
import { runScenario, type ScenarioRun } from '../scenario/run.js';
import { printScenario } from '../scenario/load.js';
import type { Scenario } from '../scenario/schema.js';
import { ListChoice } from '../sim/choice/list.js';
import { PctProbe } from '../sim/choice/pct-probe.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { hashJson } from '../sim/canonical.js';
import type { Claim, MinimalShape } from './claims.js';
import { minimiseCounterexample, notShownMinimal, shrinkTimeLimit, type MinimiseOptions, type Minimised } from './minimise.js';
import type { Invariant } from '../checkers/invariants.js';
import { Reached } from '../service/reached.js';
import { builtinService } from '../tracker/builtin.js';
import { countRun, coverageOf, situationsOf, type Coverage, type CoverageCounts, type Situation } from './coverage.js';
import { verdictWithoutFailure, type Shortfall, type Verdict } from './verdict.js';

/** How schedules are chosen in a campaign. */
export type ExploreMode = 'random' | 'pct';

/** Options of {@link runCampaign}. */
export interface CampaignOptions {
  claim: Claim;
  /** Runs asked for: fewer (a time budget stopped the campaign) is inconclusive. */
  runs: number;
  /** With `timeBudgetMs`: go on past `runs` until the budget ends (then `runs` is the least that counts). */
  untilBudget?: boolean;
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
  /** Only these run indices (a shard or a thread's share); default all. */
  slice?: Slice;
  /** Stop once this much wall time has passed (fewer runs than asked is inconclusive). */
  timeBudgetMs?: number;
  /** Run the claim's built-in as the service module at this path (loaded beforehand), as a user's module runs: the parity suite. */
  module?: string;
  /**
   * Wall ms on `clockMs` that shrinking a failure may take (fast-check's
   * shrinking and the minimiser); undefined (the default for built-in
   * claims): only the run counts limit it, so the counterexample never
   * depends on the machine's speed. When it runs out, the case in hand is
   * saved, said not known to be minimal.
   */
  shrinkBudgetMs?: number;
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
  /** What the post-shrink pass did (undefined when it did not run, e.g. exhaustive mode before its own search); `stopped` only when a shrink budget stopped it. */
  minimised?: Pick<Minimised, 'preemptionsMinimal' | 'removed' | 'undecided' | 'errored' | 'runs' | 'stopped'>;
}

/** What one claim's campaign found: verdict, runs, time to first failure and the shrunk counterexample. */
export interface CampaignResult {
  claim: Claim;
  seed: number;
  /** Runs done (schedules, in exhaustive mode). */
  runs: number;
  verdict: Verdict;
  /** Runs (schedules per scenario) asked for; absent with a time budget alone. */
  asked?: number;
  /** Why a search without failure did less than asked (verdict `inconclusive`). */
  shortfall?: Shortfall;
  /**
   * What the search reached (DESIGN invariant 9): per situation of the
   * claim's fault space, how many runs got there. Only when no run failed:
   * a failing scan stops at a point that depends on the threads' split.
   */
  coverage?: Coverage;
  /** The bounded-exhaustive part of a claim that also ran a random campaign (the main job's holding claims). */
  bounded?: BoundedPart;
  /** Wall time until the first failing scenario was found (before shrinking). */
  firstFailureMs?: number;
  /** 1-based number of the first failing run: generated scenario i is run i + 1 (a schedule, in exhaustive mode). */
  firstFailureRun?: number;
  /** Shrink steps fast-check's shrinker took (within its budget). */
  shrinks: number;
  counterexample?: Counterexample;
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

/**
 * Bounded-exhaustive exploration run beside a random campaign: every
 * schedule (up to sleep-set reduction) of the claim's small scenarios.
 */
export interface BoundedPart {
  /** Small scenarios explored, and their largest size. */
  scenarios: number;
  operationsMax: number;
  workersMax: number;
  faultsMax: number;
  /** Schedules run (one per class of equivalent schedules). */
  schedules: number;
  /** Every schedule of every small scenario ran. */
  complete: boolean;
  /** The per-scenario schedule limit it ran under. */
  schedulesMax: number;
  /** Runs abandoned part-way as reorderings of explored ones. */
  blocked: number;
}

/** The situations a claim's campaign can reach (its variant's declared steps, crash points and situations; its faults). */
export function claimSituations(claim: Claim): Situation[] {
  return situationsOf({ def: builtinService(claim.variant), faults: claim.faults, keySource: claim.keySource });
}

/** Scenario runs fast-check's shrinker may spend on a failure before {@link minimiseCounterexample} takes over. */
export const SHRINK_RUNS_MAX = 40;

/** What counts as a failure of this claim: its named invariant for a canary, any violation for a claim that should hold. */
export function failsFor(claim: Claim): (r: ScenarioRun) => boolean {
  if (claim.expected === 'holds') return (r) => r.violations.length > 0;
  const named = claim.violation ?? 'exactly-one';
  return (r) => r.violations.some((v) => v.invariant === named);
}

async function choicesFor(c: GeneratedCase, explore: ExploreMode, pct?: CampaignOptions['pct'], list?: (l: readonly number[]) => ChoiceSource): Promise<ChoiceSource> {
  if (explore === 'pct') {
    if (!pct) throw new Error('explore=pct needs a pct factory');
    // PCT's guarantee needs k, the run's length in decisions; a fixed guess
    // is too long for most cases (fewer hits) and too short for some (no
    // change point can reach their late steps), so each case is measured.
    const probe = new PctProbe();
    await runScenario(c.scenario, { choices: probe, hashTrace: false });
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

/** What one slice of a claim's runs found. */
export interface ScanResult {
  /** Run indices evaluated. */
  evaluated: number;
  /** Lowest failing run index in the slice (0-based), if any. */
  firstFailure?: number;
  /** Wall ms from the start of the scan to that failure. */
  firstFailureMs?: number;
  /** An exception escaped that run (a model bug or a limit). */
  error?: string;
  /** Situations the evaluated runs reached (id → runs). */
  coverage?: CoverageCounts;
}

/** Options of {@link scanRuns}: a slice of one claim's run indices. */
export interface ScanOptions {
  claim: Claim;
  /** The claim's seed (already forked from the campaign seed). */
  seed: number;
  /** Run indices 0..runs-1 (Infinity with a deadline). */
  runs: number;
  slice?: Slice;
  explore?: ExploreMode;
  pct?: CampaignOptions['pct'];
  listSource?: (list: readonly number[]) => ChoiceSource;
  /** Stop before index i when this says so (another slice found a failure below i). */
  stopBefore?: (i: number) => boolean;
  /** Stop once clockMs() passes this. */
  deadlineMs?: number;
  clockMs?: () => number;
  onProgress?: (evaluated: number) => void;
  module?: string;
}

/**
 * Evaluates a slice's run indices in ascending order until one fails, the
 * slice is done, `stopBefore` says a lower failure is already known, or the
 * deadline passes. Run i is {@link caseAt}(claim seed, i), so any split of
 * the indices evaluates exactly the cases the whole campaign would.
 */
export async function scanRuns(o: ScanOptions): Promise<ScanResult> {
  const explore = o.explore ?? 'random';
  const clock = o.clockMs ?? (() => 0);
  const slice = o.slice ?? WHOLE;
  const arb = arbitraryFor(o.claim, o.module);
  const fails = failsFor(o.claim);
  const t0 = clock();
  let evaluated = 0;
  const coverage: CoverageCounts = {};
  for (let i = nextOwned(slice, 0); i < o.runs; i = nextOwned(slice, i + 1)) {
    if (o.stopBefore?.(i)) break;
    if (o.deadlineMs !== undefined && clock() >= o.deadlineMs) break;
    const c = caseAt(arb, o.seed, i).value;
    let r: ScenarioRun;
    const reached = new Reached();
    try {
      r = await runScenario(c.scenario, { choices: await choicesFor(c, explore, o.pct, o.listSource), hashTrace: false, reached });
    } catch (e) {
      evaluated++;
      return { evaluated, firstFailure: i, firstFailureMs: clock() - t0, error: e instanceof Error ? e.message : String(e) };
    }
    evaluated++;
    countRun(coverage, reached);
    o.onProgress?.(evaluated);
    if (fails(r)) return { evaluated, firstFailure: i, firstFailureMs: clock() - t0 };
  }
  return { evaluated, coverage };
}

/** The scenario generator of a claim. */
export function arbitraryFor(claim: Claim, module?: string): fc.Arbitrary<GeneratedCase> {
  const arb = scenarioArbitrary({ variant: claim.variant, keySource: claim.keySource, faults: claim.faults });
  if (module === undefined) return arb;
  return arb.map((c) => ({ ...c, scenario: withModule(c.scenario, module) }));
}

/** The same scenario, its service named by a module path instead of by its built-in name (unchanged without one). */
export function withModule(s: Scenario, module: string | undefined): Scenario {
  if (module === undefined) return s;
  const { variant: _, ...service } = s.service;
  return { ...s, service: { ...service, module } };
}

/**
 * fast-check's shrinking, run greedily (as its own runner does: the first
 * failing candidate of the current value's shrink stream becomes the new
 * value) within a fixed number of scenario runs. The budget is a count, so
 * the result never depends on machine speed; {@link minimiseCounterexample}
 * then finishes the job in the dimensions that matter.
 */
export async function shrinkCase(arb: fc.Arbitrary<GeneratedCase>, start: fc.Value<GeneratedCase>, fails: (c: GeneratedCase) => Promise<boolean>, runsMax = SHRINK_RUNS_MAX, expired?: () => boolean): Promise<{ value: GeneratedCase; shrinks: number }> {
  let cur = start;
  let runs = 0;
  let shrinks = 0;
  outer: while (runs < runsMax) {
    for (const cand of arb.shrink(cur.value_, cur.context)) {
      // A shrink budget (wall time, the CLI's clock) stops it as the run count does.
      if (runs >= runsMax || expired?.() === true) break outer;
      runs++;
      if (await fails(cand.value)) {
        cur = cand;
        shrinks++;
        continue outer;
      }
    }
    break; // no candidate fails: a local minimum
  }
  return { value: cur.value, shrinks };
}

/**
 * Turns the lowest failing run index of a claim into its result: the case
 * is generated again from (claim seed, index), shrunk by fast-check within
 * {@link SHRINK_RUNS_MAX} runs, minimised and saved as a replayable file.
 * Deterministic in (claim, seed, index): every split of the campaign that
 * found the same first failure reports the same counterexample.
 */
export async function finishFailure(o: CampaignOptions, index: number): Promise<{ counterexample: Counterexample; shrinks: number }> {
  const explore = o.explore ?? 'random';
  const arb = arbitraryFor(o.claim, o.module);
  const fails = failsFor(o.claim);
  const start = caseAt(arb, o.seed, index);
  const limit = o.shrinkBudgetMs !== undefined ? shrinkTimeLimit(o.clockMs ?? (() => 0), o.shrinkBudgetMs) : undefined;
  const { value: c, shrinks } = await shrinkCase(arb, start, async (x) => fails(await runScenario(x.scenario, { choices: await choicesFor(x, explore, o.pct, o.listSource) })), SHRINK_RUNS_MAX, limit?.expired);
  const counterexample = o.minimise === false
    ? await saveCounterexample(c, o.claim, o.seed, ((src) => () => src)(await choicesFor(c, explore, o.pct, o.listSource)), o.foundDir)
    : await minimiseAndSave(c, o.claim, o.seed, await choicesFor(c, explore, o.pct, o.listSource), o.foundDir, limit);
  return { counterexample, shrinks };
}

/**
 * Runs one claim in this thread: its run indices in order until the first
 * failure (or all `runs` pass), then shrinks, minimises and saves that
 * failure as a scenario file whose `expect` is the violation, replayable
 * with `retrysim replay`. With `slice`, only that slice's indices (a shard).
 */
export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const clock = o.clockMs ?? (() => 0);
  const scan = await scanRuns({ ...o, clockMs: clock, ...(o.timeBudgetMs !== undefined ? { deadlineMs: clock() + o.timeBudgetMs, ...(o.untilBudget ? { runs: Infinity } : {}) } : {}) });
  return resultOf(o, scan);
}

/**
 * A claim's result from its scan (possibly merged from several slices): the
 * failure finished; or, without one, `holds` when every run this slice owns
 * of the `runs` asked ran — `inconclusive` when a time budget stopped it
 * short — with the coverage.
 */
export async function resultOf(o: CampaignOptions, scan: ScanResult): Promise<CampaignResult> {
  const base = { claim: o.claim, seed: o.seed, shrinks: 0, asked: o.runs };
  if (scan.firstFailure === undefined) {
    const owed = ownedCount(o.slice ?? WHOLE, o.runs);
    const verdict = verdictWithoutFailure(scan.evaluated >= owed);
    const coverage = coverageOf(claimSituations(o.claim), scan.coverage ?? {}, scan.evaluated);
    const shortfall: Shortfall | undefined = verdict === 'holds' ? undefined : {
      done: scan.evaluated, asked: o.runs, unit: 'runs',
      stoppedBy: o.timeBudgetMs !== undefined ? `time budget ${o.timeBudgetMs} ms` : 'an early stop',
    };
    return { ...base, runs: scan.evaluated, verdict, coverage, ...(shortfall ? { shortfall } : {}) };
  }
  const failure = { firstFailureMs: scan.firstFailureMs, firstFailureRun: scan.firstFailure + 1 };
  // Every index below the first failure was evaluated (a deadline aside), so
  // the campaign covered exactly first failure + 1 runs, however it was split.
  const runs = o.timeBudgetMs === undefined ? scan.firstFailure + 1 : scan.evaluated;
  if (scan.error !== undefined) return { ...base, runs, verdict: 'fails', ...failure, error: scan.error };
  const { counterexample, shrinks } = await finishFailure(o, scan.firstFailure);
  return { ...base, runs, shrinks, verdict: 'fails', ...failure, counterexample };
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
export async function minimiseAndSave(c: GeneratedCase, claim: Claim, seed: number, choices: ChoiceSource, foundDir: string | undefined, timeLimit?: MinimiseOptions['timeLimit']): Promise<Counterexample> {
  const first = await runScenario(c.scenario, { choices });
  const target = targetInvariant(claim, first);
  const isHit = (r: ScenarioRun) => (target === undefined ? r.violations.length > 0 : r.violations.some((v) => v.invariant === target));
  const m = await minimiseCounterexample(c.scenario, first.result.choices.map((x) => x.chosen), { isHit, ...(timeLimit !== undefined ? { timeLimit } : {}) });
  const cx = await saveCounterexample({ scenario: m.scenario, choices: m.choices }, claim, seed, () => new ListChoice(m.choices), foundDir);
  cx.minimised = { preemptionsMinimal: m.preemptionsMinimal, removed: m.removed, undecided: m.undecided, errored: m.errored, runs: m.runs, ...(m.stopped ? { stopped: m.stopped } : {}) };
  cx.notMinimal.push(...notShownMinimal(m));
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
  foundDir: string | undefined,
): Promise<Counterexample> {
  const o = { claim, seed, foundDir };
  const run = await runScenario(c.scenario, { choices: choices() });
  const invariants = [...new Set(run.violations.map((v) => v.invariant))].sort();
  const scenario: Scenario = {
    ...c.scenario,
    name: `${o.claim.id}: shrunk counterexample`,
    description: `Found by retrysim check (claim ${claim.id}, claim seed ${seed}): ${run.violations.map((v) => `${v.invariant} — ${v.detail}`).join('; ')}.`,
    schedule: scheduleOf(run.result.choices),
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
    replay: file !== undefined ? `retrysim replay ${shellArg(file)} --trace` : '(not written: pass a found directory)',
    notMinimal: minimalityProblems(o.claim.minimal, size),
  };
}
