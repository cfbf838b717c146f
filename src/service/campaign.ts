import { serviceEpochField } from './epoch.js';
import { shellArg } from '../report/shell.js';
import fc from 'fast-check';
import { InFlight } from '../campaign/in-flight.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scenarioArbitrary, scenarioSize, type FaultKind, type GeneratedCase } from '../scenario/arbitraries.js';
import { runScenario, type ScenarioRun } from '../scenario/run.js';
import { printScenario } from '../scenario/load.js';
import { scheduleOf } from '../scenario/record.js';
import type { Scenario } from '../scenario/schema.js';
import { ListChoice } from '../sim/choice/list.js';
import { hashJson } from '../sim/canonical.js';
import { CaseDoesNotFailError, minimiseCounterexample, notShownMinimal, shrinkTimeLimit, type MinimiseOptions, type Minimised } from '../campaign/minimise.js';
import { campaignPct } from '../campaign/pct.js';
import { PctProbe } from '../sim/choice/pct-probe.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { exploreAll } from '../sim/explore/exhaustive.js';
import { serviceSmallScenarios } from './small.js';
import { SHRINK_RUNS_MAX } from '../campaign/run.js';
import type { KeySource } from '../harness/keys.js';
import type { Violation } from '../checkers/invariants.js';
import type { ServiceDefinition } from './definition.js';
import { APP_STATE_HOME, NotRerunError, SERVICE_STATE_HOME, ServiceError } from './errors.js';
import { editedTitle } from '../scenario/workers.js';
import { registerService } from './registry.js';
import { freshServiceCopy } from './fresh-copy.js';
import { adoptStop, serviceInFile, writeStoppedRun } from './stopped-run.js';
import { RecordingChoice } from '../sim/choice/recording.js';
import { ExplorationDivergenceError } from '../sim/explore/prefix.js';
import { PER_PROCESS_ENV } from '../app/per-process.js';
import { Reached } from './reached.js';
import { isHostedApp, moduleFlag } from '../app/define.js';
import { countRun, coverageOf, situationsOf, STEP_REACHED, withLaterReaches, type Coverage, type CoverageCounts } from '../campaign/coverage.js';
import { ownedCount, owns, type Slice } from '../campaign/runs.js';

/**
 * The standard fault space for a user service: lost responses (after a
 * commit, and on the way back), a crash at each declared crash point, slow
 * steps and pauses at each declared step, kill/restart, two instances on one
 * database, clock skew, concurrent duplicates, two tenants whose keys
 * coincide, the same key with a different body, spans of minutes to hours
 * (long pauses and client timeouts, uncapped backoff, clock skew of hours)
 * and three concurrent requests with one key.
 */
export function serviceFaults(def: ServiceDefinition): FaultKind[] {
  const all: FaultKind[] = ['loseResponse', 'crash', 'slow', 'concurrency', 'kill', 'pause', 'clockOffset', 'instances', 'loseAllAnswers', 'tenants', 'keyReuseProbe', 'longSpans', 'threeWorkers'];
  const noProbe = probeLeftOut(def) !== undefined;
  return all.filter((f) => !(f === 'crash' && (def.crashPoints ?? []).length === 0) && !(f === 'keyReuseProbe' && noProbe));
}

/**
 * Why the key-reuse probe is not in the service's fault space, in words for
 * the `faults:` line and a `--faults` error; undefined when it is.
 */
export function probeLeftOut(def: ServiceDefinition): string | undefined {
  if (def.operation.readsKey === false) return 'operation.readsKey is false: idempotent by its URL, it makes no promise about a key sent again';
  if (bodyIgnoresTitle(def)) return 'operation.body does not use op.title, which is what the probe changes';
  return undefined;
}

/**
 * Whether the service's request body is the same whatever the operation's
 * title: the key-reuse probe changes only the title, so for such a body it
 * would send the very same bytes again — a plain retry, which the service is
 * right to accept — and report it as "a different body was accepted". The
 * probe is then left out of the fault space (and said so), not judged.
 */
export function bodyIgnoresTitle(def: ServiceDefinition): boolean {
  const op = { runId: 'run-1', module: 'module', title: 'title', steps: 'steps', tenant: 'default' };
  try {
    return def.operation.body(op) === def.operation.body({ ...op, title: editedTitle(op.title) });
  } catch {
    return false; // a body that throws is named by the first run that builds it
  }
}

/** How a user-service campaign chooses schedules (as `retrysim check --explore`). */
export type ServiceExplore = 'random' | 'pct' | 'exhaustive';

/** Options of {@link runServiceCampaign}. */
export interface ServiceCampaignOptions {
  def: ServiceDefinition;
  /** The module path the definition was loaded from (recorded in counterexample files). Default: the service's name. */
  module?: string;
  /** Default `tool_call`. */
  keySource?: KeySource;
  /** Default {@link serviceFaults}. */
  faults?: readonly FaultKind[];
  /**
   * random (default): fast-check generates scenarios and schedules (both
   * shrink); pct: generated scenarios, schedules by PCT (depth 3, k fitted to
   * each case); exhaustive: every schedule of the service's small scenarios
   * ({@link serviceSmallScenarios}), with sleep-set reduction.
   */
  explore?: ServiceExplore;
  /** Generated scenarios (random, pct) or schedules per small scenario (exhaustive); with a time budget, at most this many. */
  runs: number;
  seed: number;
  /**
   * Random and pct only: stop generating after this many ms of the campaign
   * (fast-check's time limit; a failure found is still shrunk). A holding
   * campaign that ran fewer than {@link atLeast} scenarios is inconclusive.
   */
  timeBudgetMs?: number;
  /** The scenarios a holding verdict needs (default `runs`): with a budget and no run count, the default count. */
  atLeast?: number;
  /**
   * Random and pct only: run only the run indices this slice owns (blocks of
   * 64 dealt round-robin over the shards, as for built-in claims). Every
   * case is still generated, in the same order, so a shard runs exactly the
   * cases the whole campaign would at its indices, and a failure is found at
   * the same run number and shrunk the same way.
   */
  slice?: Slice;
  /** Where the shrunk counterexample is written; undefined: not written. */
  foundDir?: string;
  onProgress?: (done: number) => void;
  /** After a failure at run `at` (1-based): called after each of the minimiser's runs, `tried` so far (a person's progress). */
  onShrink?: (tried: number, at: number) => void;
  /** Measures elapsed ms (injected: simulated code never reads real time). */
  clockMs?: () => number;
  /**
   * Wall ms on `clockMs` that shrinking a failure may take, from the moment
   * it is found (fast-check's shrinking and the minimiser together);
   * undefined: only the run counts limit it. When it runs out, the case in
   * hand — which fails — is written all the same, and said not known to be
   * minimal ({@link ServiceCounterexample.notMinimal}).
   */
  shrinkBudgetMs?: number;
  /** What the counterexample file's description says found it (default `check`). */
  foundBy?: FoundBy;
  /** Random and pct: called after each run of the campaign before any failure (0-based `index`), with its case and result. */
  onRun?: (index: number, c: GeneratedCase, r: ScenarioRun) => void;
}

/** A service's verdict: `inconclusive` is a holding result from fewer runs or schedules than asked (never a ✓). */
export type ServiceVerdict = 'holds' | 'fails' | 'inconclusive';

/** What a campaign on a user service found. */
export interface ServiceCampaignResult {
  service: string;
  module: string;
  keySource: KeySource;
  seed: number;
  explore: ServiceExplore;
  faults: FaultKind[];
  /** Scenarios run (random, pct) or schedules run (exhaustive); a shard's own (see `slice`). */
  runs: number;
  /** Random and pct: run indices generated (every slice's, a sharded campaign's too), 0..generated-1. */
  generated?: number;
  /** Random and pct: whether any request of the runs made was answered 2xx or made an effect, and the other statuses seen (a shard's part of the vacuity check). */
  answers?: { succeeded: boolean; others: number[] };
  verdict: ServiceVerdict;
  /** Why the verdict is inconclusive. */
  inconclusive?: string;
  /** Exhaustive: every schedule of every small scenario was run. */
  complete?: boolean;
  firstFailureMs?: number;
  /** 1-based number of the first failing scenario (a schedule, in exhaustive mode). */
  firstFailureRun?: number;
  /** The minimised counterexample. */
  counterexample?: ServiceCounterexample;
  /**
   * What the runs reached (DESIGN invariant 9: a green says what it
   * covered): every situation of this service's fault space — each fault at
   * each declared step, same-key overlaps, preemptions, replays, recovery,
   * time spans, the service's own `situations` — and how many runs reached
   * it. Present when nothing failed (a failing scan stops at a point that
   * says nothing about coverage).
   */
  coverage?: Coverage;
}

/** A user service's minimised, replayable counterexample. */
export interface ServiceCounterexample {
  scenario: Scenario;
  file?: string;
  violations: Violation[];
  size: ReturnType<typeof scenarioSize>;
  /** Whether the schedule search showed no schedule with fewer preemptions fails (every one ran, none threw). */
  preemptionsMinimal: boolean;
  removed: string[];
  /** What the minimiser did and could not show, as `check --json` reports it for built-in claims (`stopped` only when the shrink budget stopped it). */
  minimised: Pick<Minimised, 'preemptionsMinimal' | 'removed' | 'undecided' | 'errored' | 'runs' | 'stopped'>;
  /** Every dimension not shown minimal, in words (empty: every one-step simplification was tried and none fails). */
  notMinimal: string[];
  replay: string;
  /** Processes that crashed in the counterexample's run (an unhandled rejection): which, and why. */
  crashes: Array<{ instance: string; cause: string }>;
}

/** The generator of scenarios (faults, timing, interleavings) for a user service. */
export function serviceCaseArbitrary(def: ServiceDefinition, module: string, keySource: KeySource = 'tool_call', faults: readonly FaultKind[] = serviceFaults(def)): fc.Arbitrary<GeneratedCase> {
  return scenarioArbitrary({ variant: 'naive', service: { module, steps: def.steps, crashPoints: def.crashPoints ?? [], noun: def.effects.noun ?? 'effect', ...serviceEpochField(def) }, keySource, faults });
}

/**
 * The names `--faults` accepts for this service, and the list checked: an
 * unknown name, or `crash` for a service without crash points, is a
 * {@link ServiceFaultsError} naming the valid ones.
 */
export function parseServiceFaults(def: ServiceDefinition, list: string): FaultKind[] {
  const names = list.split(',').map((x) => x.trim()).filter((x) => x !== '');
  if (names.length === 0) throw new ServiceFaultsError(`--faults needs at least one of ${serviceFaults(def).join(', ')}`);
  for (const n of names) {
    const problem = serviceFaultProblem(def, n);
    if (problem !== undefined) throw new ServiceFaultsError(`--faults: ${problem}`);
  }
  return [...new Set(names)] as FaultKind[];
}

/**
 * Why `name` is not a fault of the service's space, as the end of a
 * message (`unknown fault 'x'; valid for service s: …`), or undefined when
 * it is one: `--faults` and the vitest helper's `faults` say the same.
 */
export function serviceFaultProblem(def: ServiceDefinition, name: string): string | undefined {
  const valid = serviceFaults(def);
  if ((valid as string[]).includes(name)) return undefined;
  // The user's word for what they named: an app (--app) or a service.
  const what = `${isHostedApp(def) ? 'app' : 'service'} ${def.name}`;
  const left = name === 'keyReuseProbe' ? probeLeftOut(def) : undefined;
  const why = name === 'crash' ? ` (${what} declares no crash points)` : left !== undefined ? ` (${what}: ${left})` : '';
  return `unknown fault '${name}'${why}; valid for ${what}: ${valid.join(', ')}`;
}

/** A `--faults` list that names no fault of the service's space. */
export class ServiceFaultsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceFaultsError';
  }
}

/** What the service did across a campaign's runs: whether any request got a 2xx or made an effect, and the other statuses seen. */
export interface Answers {
  succeeded: boolean;
  others: Set<number>;
  /** The first exception a handler threw, in the campaign's first run that threw one. */
  threw?: string;
  /** The first answer outside 2xx a handler gave, status and clipped body (in the campaign's first run that gave one). */
  refused?: string;
  /** The first crash of a process by the code it runs (an unhandled rejection, an uncaught exception), as the table's crash line says it. */
  crashed?: string;
}

/** What one run was answered, and the first exception, refusal and crash it met (`reached`'s), into `answers`. */
export function noteRun(answers: Answers, r: ScenarioRun, reached: Reached): void {
  noteAnswers(answers, r);
  answers.threw ??= reached.threw;
  answers.refused ??= reached.refused;
  answers.crashed ??= r.crashes?.[0]?.cause;
}

export function noteAnswers(answers: Answers, r: ScenarioRun): void {
  // An effect made counts too: every answer may have been lost on the way back.
  if (Object.values(r.reports).some((n) => n > 0)) answers.succeeded = true;
  for (const op of r.operations) {
    for (const a of op.attempts) {
      if (a.outcome.kind !== 'http') continue;
      if (a.outcome.status >= 200 && a.outcome.status < 300) answers.succeeded = true;
      else answers.others.add(a.outcome.status);
    }
  }
}

/**
 * Why a campaign in which no request was ever answered 2xx says nothing:
 * a service that does nothing (every request throws: a typo in its SQL)
 * meets every safety invariant, so "holds" would be about code that never
 * did its work.
 */
export function neverSucceeded(def: ServiceDefinition, module: string, runs: number, answers: Answers): string {
  const seen = [...answers.others].sort((a, b) => a - b).join(', ') || 'none';
  const noun = def.effects.noun ?? 'effect';
  // The exception itself, where the service threw it: "answers: 500" alone sent the reader off to serve it by hand.
  const threw = answers.threw !== undefined ? `; its handler threw ${answers.threw}` : '';
  // A process its own code crashed answers nothing at all: "answers: none" said nothing of the rejection that did it.
  const crashed = answers.crashed !== undefined ? `; its process crashed (${answers.crashed})` : '';
  // An app that catches its own error answers 500 with it: quote the answer where nothing threw.
  const refused = answers.threw === undefined && answers.refused !== undefined ? `; the first answered ${answers.refused}` : '';
  return `no request of the ${runs} runs was answered 2xx or made ${/^[aeiou]/i.test(noun) ? 'an' : 'a'} ${noun} (answers: ${seen})${threw}${refused}${crashed}, and a service that does nothing breaks no safety invariant; serve it (retrysim serve ${moduleFlag(def)} ${shellArg(module)} --db FILE) and send its operation to see why`;
}

/** Runs one scenario of a user service on a choice source, counting what it reached into `counts` and what it answered into `answers` when given. */
function runner(def: ServiceDefinition, counts?: CoverageCounts, answers?: Answers, flight?: InFlight) {
  return async (s: Scenario, choices: ChoiceSource, hashTrace = true) => {
    if (counts === undefined) return runScenario(s, { choices, service: def, hashTrace });
    // A fresh count per run: a run that throws (a broken service) counts nothing, nor one a time budget abandoned.
    const reached = new Reached();
    const r = await runScenario(s, { choices, service: def, hashTrace, reached });
    if (flight?.abandoned === true) return r;
    countRun(counts, reached);
    if (answers !== undefined) noteRun(answers, r, reached);
    return r;
  };
}

/** The coverage table of a campaign over `faults` on this service. */
function serviceCoverage(def: ServiceDefinition, faults: readonly FaultKind[], keySource: KeySource, counts: CoverageCounts, runs: number): Coverage {
  const app = isHostedApp(def);
  const all = situationsOf({ def, faults, keySource, slowAtAnyStep: true, killAtAnswer: true, stepsUnordered: app, answerIds: true });
  // A hosted app's steps are every command the store has; a fault at a
  // command the app never sent is outside its fault space, not a gap in
  // what the runs covered ("never reached: a pause at kv.pttl" for an app
  // that never calls pTTL would say the verdict missed something).
  const situations = app ? all.filter((x) => {
    const at = /^(?:crash|slow|pause|kill|preempt)@(.+?)(?:: answer lost)?$/.exec(x.id)?.[1];
    return at === undefined || !def.steps.includes(at) || (counts[`${STEP_REACHED}${at}`] ?? 0) > 0;
  }) : all;
  return coverageOf(withLaterReaches(situations, counts), counts, runs);
}

/** The PCT choice source of one generated case: k measured by a probe run (as for built-in claims). */
export async function pctChoices(def: ServiceDefinition, c: GeneratedCase): Promise<ChoiceSource> {
  const probe = new PctProbe();
  await runScenario(c.scenario, { choices: probe, hashTrace: false, service: def });
  return campaignPct(c.scenario.seed, probe.steps);
}

/**
 * Runs the standard campaign against a user service: scenarios and
 * schedules are generated (random, pct) or enumerated (exhaustive), each
 * runs on the kernel through the service API, the effects are judged; a
 * failure is shrunk, minimised (fewest preemptions, then no removable
 * operation, worker, fault, instance or attempt) and written as a scenario
 * file that `retrysim replay --service` replays. A problem in the service
 * itself stops the campaign with its {@link ServiceError}.
 */
export async function runServiceCampaign(o: ServiceCampaignOptions): Promise<ServiceCampaignResult> {
  const module = o.module ?? o.def.name;
  registerService(module, o.def);
  const keySource = o.keySource ?? 'tool_call';
  const explore = o.explore ?? 'random';
  const faults = [...(o.faults ?? serviceFaults(o.def))];
  const base = { service: o.def.name, module, keySource, seed: o.seed, explore, faults };
  if (explore === 'exhaustive') return { ...base, ...(await exhaustiveService(o, module, keySource, faults)) };
  const clock = o.clockMs ?? (() => 0);
  const t0 = clock();
  const counts: CoverageCounts = {};
  const answers: Answers = { succeeded: false, others: new Set() };
  // A run the time budget abandons finishes before the campaign goes on (in-flight.ts).
  const flight = new InFlight();
  const run = runner(o.def, counts, answers, flight);
  const fails = (r: ScenarioRun) => r.violations.length > 0;
  const choicesOf = (c: GeneratedCase) => (explore === 'pct' ? pctChoices(o.def, c) : Promise.resolve(new ListChoice(c.choices)));
  let firstFailureMs: number | undefined;
  let firstFailureRun: number | undefined;
  /** What the first failing run broke (a NotRerunError says it). */
  let firstBroken: string[] = [];
  let serviceError: ServiceError | undefined;
  /** The case that stopped the campaign with {@link serviceError}, and its run. */
  let stoppedBy: { c: GeneratedCase; run: number; shrinking: boolean } | undefined;
  let done = 0;
  let index = -1;
  let shrinkRuns = 0;
  /** The shrink budget, started at the first failure: fast-check's shrinking stops at it as at its run count. */
  let shrinkLimit: MinimiseOptions['timeLimit'];
  const slice = o.slice;
  /** The run a stop of its own course (a request never answered) first ended: fast-check then shrinks the stop, as a failure. */
  let firstStop: number | undefined;
  const prop = fc.asyncProperty(serviceCaseArbitrary(o.def, module, keySource, faults), flight.track(async (c) => {
    const shrinking = firstFailureMs !== undefined || firstStop !== undefined;
    if (serviceError !== undefined || (shrinking && (++shrinkRuns > SHRINK_RUNS_MAX || shrinkLimit?.expired() === true))) return true;
    // Before a failure every call is the next run index; another shard's index passes untouched (shrinking runs them all).
    if (!shrinking) {
      index++;
      if (slice !== undefined && !owns(slice, index)) return true;
    }
    let r: ScenarioRun;
    try {
      r = await run(c.scenario, await choicesOf(c), false);
    } catch (e) {
      if (flight.abandoned) return true;
      if (e instanceof ServiceError && e.ofTheRun && firstFailureMs === undefined) {
        // A request never answered, the run-time limit: a case of its own, shrunk like a failure (fast-check takes a throw
        // for one), so that the file written is the smallest run that stops so. Only stops count while it shrinks.
        if (firstStop === undefined) {
          firstStop = index + 1;
          if (o.shrinkBudgetMs !== undefined) shrinkLimit = shrinkTimeLimit(clock, o.shrinkBudgetMs);
        }
        throw e;
      }
      if (e instanceof ServiceError) {
        serviceError = e; // a broken service: no point shrinking a verdict about it
        if (e.ofTheRun) stoppedBy = { c, run: firstFailureRun ?? index + 1, shrinking: true };
        return true;
      }
      throw e;
    }
    if (flight.abandoned || firstStop !== undefined) return true;
    if (firstFailureMs === undefined) {
      done++;
      o.onProgress?.(done);
      o.onRun?.(index, c, r);
    }
    if (!fails(r)) return true;
    if (firstFailureMs === undefined) {
      firstBroken = [...new Set(r.violations.map((v) => v.invariant))];
      firstFailureMs = clock() - t0;
      if (o.shrinkBudgetMs !== undefined) shrinkLimit = shrinkTimeLimit(clock, o.shrinkBudgetMs);
    }
    firstFailureRun ??= index + 1;
    return false;
  }));
  const details = await fc.check(prop, { numRuns: o.runs, seed: o.seed, ...(o.timeBudgetMs !== undefined ? { interruptAfterTimeLimit: o.timeBudgetMs, markInterruptAsFailure: false } : {}) });
  await flight.settle();
  if (serviceError !== undefined) {
    if (stoppedBy !== undefined) adoptStop(serviceError, await writeStoppedRun(o.def, module, stoppedBy.c, await choicesOf(stoppedBy.c), o.seed, o.foundDir, { run: stoppedBy.run, shrinking: stoppedBy.shrinking }, o.foundBy, shrinkLimit));
    throw serviceError;
  }
  const stop = details.errorInstance;
  if (firstStop !== undefined && stop instanceof ServiceError && details.counterexample !== null) {
    // The smallest case fast-check found stopping so: written, so that replay --trace shows what led there.
    const [c] = details.counterexample as [GeneratedCase];
    adoptStop(stop, await writeStoppedRun(o.def, module, c, await choicesOf(c), o.seed, o.foundDir, { run: firstStop, shrinking: false }, o.foundBy, shrinkLimit));
    throw stop;
  }
  // A budget spent before the first run ends is "failed" with no counterexample to fast-check: nothing failed here.
  if (!details.failed || (details.interrupted && details.counterexample === null)) {
    // Every generated scenario ran unless the budget stopped it (fast-check skips none here); fewer than asked is inconclusive, never a ✓.
    const ran = slice === undefined ? details.numRuns : ownedCount(slice, details.numRuns);
    const coverage = serviceCoverage(o.def, faults, keySource, counts, ran);
    const atLeast = slice === undefined ? (o.atLeast ?? o.runs) : ownedCount(slice, o.atLeast ?? o.runs);
    const part = { ...base, runs: ran, generated: details.numRuns, answers: { succeeded: answers.succeeded, others: [...answers.others].sort((a, b) => a - b) }, coverage };
    if (ran < atLeast) return { ...part, verdict: 'inconclusive', inconclusive: `${ran} of ${atLeast} scenarios ran${details.interrupted ? ' (the time budget ran out)' : ''}` };
    if (!answers.succeeded) return { ...part, verdict: 'inconclusive', inconclusive: neverSucceeded(o.def, module, ran, answers) };
    return { ...part, verdict: 'holds' };
  }
  if (details.errorInstance && !(details.errorInstance instanceof Error && /Property failed by returning false/.test(details.errorInstance.message))) {
    throw details.errorInstance;
  }
  const [c] = details.counterexample as [GeneratedCase];
  const at = firstFailureRun ?? details.numRuns;
  let counterexample: ServiceCounterexample;
  try {
    counterexample = await minimiseAndWrite(o.def, module, c, o.seed, o.foundDir, explore === 'pct' ? await choicesOf(c) : undefined, o.onShrink && ((n) => o.onShrink!(n, at)), shrinkLimit, o.foundBy);
  } catch (e) {
    if (e instanceof NotRerunError) e.failed = { run: at, invariants: firstBroken };
    throw e;
  }
  return { ...base, runs: firstFailureRun ?? details.numRuns, verdict: 'fails', firstFailureMs, ...(firstFailureRun !== undefined ? { firstFailureRun } : {}), counterexample };
}

/**
 * Bounded exhaustive exploration of a user service: every schedule of each
 * of its small scenarios, up to reordering steps that commute (sleep sets
 * over the footprints the service declares; an undeclared step conflicts
 * with everything). `fails` at the first violating schedule, minimised and
 * written like any counterexample; `holds` only when every schedule of
 * every small scenario ran; a search stopped by the schedule limit is
 * `inconclusive`.
 */
async function exhaustiveService(o: ServiceCampaignOptions, module: string, keySource: KeySource, faults: FaultKind[]): Promise<Omit<ServiceCampaignResult, 'service' | 'module' | 'keySource' | 'seed' | 'explore' | 'faults'>> {
  const clock = o.clockMs ?? (() => 0);
  const t0 = clock();
  const counts: CoverageCounts = {};
  const answers: Answers = { succeeded: false, others: new Set() };
  const run = runner(o.def, counts, answers);
  let schedules = 0;
  let complete = true;
  const fails = (r: ScenarioRun) => r.violations.length > 0;
  for (const s of serviceSmallScenarios(o.def, module, faults, keySource)) {
    const scenario = { ...s, seed: o.seed };
    // The schedule in progress, recorded: a stop (a request never answered) hands no decisions back, and its file needs them.
    let last: RecordingChoice | undefined;
    let ranHere = 0;
    let e: Awaited<ReturnType<typeof exploreAll<ScenarioRun>>>;
    try {
      e = await exploreAll((choices) => run(scenario, (last = new RecordingChoice(choices)), false), {
        schedulesMax: o.runs,
        reduce: true,
        keep: fails,
        onSchedule: (x) => {
          ranHere = x.index + 1;
          o.onProgress?.(schedules + x.index + 1);
          return !fails(x.result); // stop at the first failing schedule
        },
      });
    } catch (err) {
      if (err instanceof ExplorationDivergenceError) throw divergedSearch(o.def, err);
      if (err instanceof ServiceError && err.ofTheRun && last !== undefined) {
        const chosen = last.records.map((r) => r.chosen);
        adoptStop(err, await writeStoppedRun(o.def, module, { scenario, choices: chosen }, new ListChoice(chosen), o.seed, o.foundDir, { run: schedules + ranHere + 1, shrinking: false, exhaustive: true }, o.foundBy, o.shrinkBudgetMs !== undefined ? shrinkTimeLimit(clock, o.shrinkBudgetMs) : undefined));
      }
      throw err;
    }
    schedules += e.schedules;
    complete &&= e.complete;
    const failing = e.results[0];
    if (failing) {
      const firstFailureMs = clock() - t0;
      const limit = o.shrinkBudgetMs !== undefined ? shrinkTimeLimit(clock, o.shrinkBudgetMs) : undefined;
      const counterexample = await minimiseAndWrite(o.def, module, { scenario, choices: failing.choices }, o.seed, o.foundDir, undefined, o.onShrink && ((n) => o.onShrink!(n, schedules)), limit, o.foundBy);
      return { runs: schedules, verdict: 'fails', complete: false, firstFailureMs, firstFailureRun: schedules, counterexample };
    }
  }
  const coverage = serviceCoverage(o.def, faults, keySource, counts, schedules);
  if (!answers.succeeded) return { runs: schedules, verdict: 'inconclusive', complete, inconclusive: neverSucceeded(o.def, module, schedules, answers), coverage };
  if (!complete) return { runs: schedules, verdict: 'inconclusive', complete, inconclusive: `the schedule limit (${o.runs} per small scenario) stopped the enumeration before every schedule ran`, coverage };
  return { runs: schedules, verdict: 'holds', complete, coverage };
}

/**
 * An exhaustive search that ran one schedule twice and saw the runs go
 * different ways: the service depends on more than the run (most often
 * state at module level — a rate limiter whose window never passes turns
 * a request into a 429 with other store commands). Until 2026-12 this was
 * "internal error … a bug in retrysim", exit 1, which reads as "fails".
 */
function divergedSearch(def: ServiceDefinition, e: ExplorationDivergenceError): ServiceError {
  const at = e.names ? `decision #${e.index} offered [${e.names.before.join(', ')}] in an earlier run and [${e.names.now.join(', ')}] in this one` : `decision #${e.index} offered ${e.expectedArity} candidates in an earlier run and ${e.actualArity} in this one`;
  const e2 = new ServiceError(def.name, `does not run the same way twice on the same schedule (an exhaustive search's ${at}): its behaviour depends on more than the run — most often state kept at module level (a rate limiter, a cache, a counter), which lives on from one simulated run to the next; ${isHostedApp(def) ? `${APP_STATE_HOME}; or search with one module load per simulated process: ${PER_PROCESS_ENV}=1 before the same command` : SERVICE_STATE_HOME}`);
  e2.divergedSearch = true;
  e2.divergedAt = at;
  return e2;
}

/**
 * A service whose failing case does not fail again in the same process: not
 * a bug in retrysim (the minimiser would otherwise stop on it as one) but a
 * module whose behaviour depends on more than the run — one line, exit 2.
 */
function notRerun(def: ServiceDefinition, what: string): ServiceError {
  return new NotRerunError(def.name, `does not fail the same way twice on the same run (${what}): its behaviour depends on more than the run — most often state kept at module level (a Map, a cache, a counter), which lives on from one simulated run to the next in a campaign; ${isHostedApp(def) ? APP_STATE_HOME : SERVICE_STATE_HOME}`);
}

/** What found a counterexample, as its file's description says: `retrysim check` or a vitest property (retrysim/vitest). */
export type FoundBy = 'check' | 'vitest';

/**
 * Minimises a failing case and writes it with its schedule and `expect`
 * (the effects and the violated invariants), named by service, invariant
 * and content hash. `choices` replays the failing run when it was not the
 * case's own list (a PCT schedule). What the minimiser could not show is
 * said in the file's description too. `timeLimit` (the shrink budget)
 * stops the minimiser; the case in hand is written, said not known minimal.
 */
export async function minimiseAndWrite(def: ServiceDefinition, module: string, c: GeneratedCase, seed: number, foundDir?: string, choices?: ChoiceSource, onRun?: (tried: number) => void, timeLimit?: MinimiseOptions['timeLimit'], foundBy: FoundBy = 'check'): Promise<ServiceCounterexample> {
  registerService(module, def);
  const run1 = runner(def);
  const first = await run1(c.scenario, choices ?? new ListChoice(c.choices));
  const target = first.violations[0]?.invariant;
  if (target === undefined) throw notRerun(def, 'the failing case passed');
  const isHit = (r: ScenarioRun) => r.violations.some((v) => v.invariant === target);
  let tried = 0;
  let m: Minimised;
  try {
    m = await minimiseCounterexample(c.scenario, first.result.choices.map((x) => x.chosen), {
      isHit,
      steps: def.steps,
      run: async (s, ch) => {
        try {
          return await run1(s, ch);
        } finally {
          onRun?.(++tried);
        }
      },
      ...(timeLimit !== undefined ? { timeLimit } : {}),
    });
  } catch (e) {
    if (e instanceof CaseDoesNotFailError) throw notRerun(def, `the failing case broke ${target}, then passed`);
    throw e;
  }
  let run = await run1(m.scenario, new ListChoice(m.choices));
  if (!isHit(run)) throw notRerun(def, `the minimised case broke ${target}, then passed`);
  // What the file replays to: its last run on a fresh copy of the module and its libraries, whose
  // module-level state (a random pool, a v7 clock) starts as a replay's does (src/service/fresh-copy.ts).
  const fresh = await freshServiceCopy(def, module);
  if (fresh !== undefined) {
    const again = await runner(fresh)(m.scenario, new ListChoice(m.choices));
    if (isHit(again)) run = again;
  }
  const invariants = [...new Set(run.violations.map((v) => v.invariant))].sort();
  const notMinimal = notShownMinimal(m);
  const scenario: Scenario = {
    ...m.scenario,
    service: serviceInFile(m.scenario.service, def, module),
    name: `${def.name}: shrunk counterexample`,
    // The flag the user ran (`--app` for an app descriptor), so the file's own words reproduce it;
    // a vitest property was not `retrysim check`, so its file says what found it and how to replay it.
    description: `${foundBy === 'vitest' ? `Found by a vitest property (retrysim's vitest helper, seed ${seed}; replay with retrysim replay ${moduleFlag(def)} ${shellArg(module)} <this file>)` : `Found by retrysim check ${moduleFlag(def)} ${shellArg(module)} (seed ${seed})`}: ${run.violations.map((v) => `${v.invariant} — ${v.detail}`).join('; ')}.` +
      (notMinimal.length > 0 ? ` Not shown minimal: ${notMinimal.join('; ')}.` : ''),
    schedule: scheduleOf(run.result.choices),
    expect: { reports: run.reports, violations: invariants },
  };
  const size = scenarioSize(scenario, run.operations.reduce((n, op) => n + op.attempts.length, 0));
  let file: string | undefined;
  if (foundDir !== undefined) {
    mkdirSync(foundDir, { recursive: true });
    file = join(foundDir, `${def.name}-${target ?? 'violation'}-${hashJson(scenario).slice(0, 8)}.json`);
    writeFileSync(file, printScenario(scenario));
  }
  return {
    scenario,
    ...(file !== undefined ? { file } : {}),
    violations: run.violations,
    size,
    preemptionsMinimal: m.preemptionsMinimal,
    removed: m.removed,
    minimised: { preemptionsMinimal: m.preemptionsMinimal, removed: m.removed, undecided: m.undecided, errored: m.errored, runs: m.runs, ...(m.stopped ? { stopped: m.stopped } : {}) },
    notMinimal,
    replay: file !== undefined ? `retrysim replay ${moduleFlag(def)} ${shellArg(module)} ${shellArg(file)} --trace` : '(not written)',
    crashes: run.crashes ?? [],
  };
}
