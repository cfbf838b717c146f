import fc from 'fast-check';
import { shellArg } from '../report/shell.js';
import { InFlight } from '../campaign/in-flight.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scenarioArbitrary, scenarioSize, type FaultKind, type GeneratedCase } from '../scenario/arbitraries.js';
import { printScenario } from '../scenario/load.js';
import { scheduleOf } from '../scenario/record.js';
import type { Scenario } from '../scenario/schema.js';
import { ListChoice } from '../sim/choice/list.js';
import { hashJson } from '../sim/canonical.js';
import { builtinService, type BuiltinName as Variant } from '../tracker/builtin.js';
import type { Violation } from '../checkers/invariants.js';
import type { ServiceDefinition } from '../service/definition.js';
import { serviceCaseArbitrary, type FoundBy } from '../service/campaign.js';
import { registerService } from '../service/registry.js';
import { CaseDoesNotFailError, minimiseCounterexample, notShownMinimal, shrinkTimeLimit, type MinimiseOptions, type Minimised } from '../campaign/minimise.js';
import { CLIENT_STATE_HOME, ClientError } from './load.js';
import { ServiceError } from '../service/errors.js';
import { writeClientStoppedRun } from './stopped-run.js';
import { adoptStop, serviceInFile } from '../service/stopped-run.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { campaignPct } from '../campaign/pct.js';
import { PctProbe } from '../sim/choice/pct-probe.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { runClientScenario, type ClientRun, type RetryClient } from './run.js';
import { clientSmallScenarios } from './small.js';
import { exploreAll } from '../sim/explore/exhaustive.js';
import { countRun, coverageOf, type Coverage, type CoverageCounts } from '../campaign/coverage.js';
import { Reached } from '../service/reached.js';
import { clientSituationsOf, firstRefusal, neverSucceeded, preferRefusal, type Refusal } from './coverage.js';
import { ownedCount, owns, type Slice } from '../campaign/runs.js';

/** The faults a retry client is run under by default. */
export const CLIENT_FAULTS: readonly FaultKind[] = ['loseResponse', 'loseAllAnswers', 'crash', 'slow', 'pause', 'kill', 'instances', 'throttle', 'answer', 'sameContent', 'sameInstant'];

/** Why `name` is not a client fault, as the end of a message, or undefined when it is one: `check --client --faults` and the vitest helper's `faults` say the same. */
export function clientFaultProblem(name: string): string | undefined {
  return (CLIENT_FAULTS as readonly string[]).includes(name) ? undefined : `unknown fault '${name}'; valid for a client: ${CLIENT_FAULTS.join(', ')}`;
}

/** Where a client counterexample goes unless told otherwise (git-ignored, as for `retrysim check`). */
export const CLIENT_FOUND_DIR = '.retrysim/found';

/** What a client runs against: a built-in variant (default `key_atomic`, a correct endpoint, so what fails is the client) or a user's service. */
export interface ClientTarget {
  variant?: Variant;
  service?: ServiceDefinition;
  /** The service's module path (recorded in files so the replay loads it). Default: the service's name. */
  serviceModule?: string;
}

/** The arbitrary of scenarios for a retry client: up to two operations (what one call does to the next — a key, a budget, a breaker shared across calls — is the client's too). */
export function clientCaseArbitrary(t: ClientTarget = {}, faults: readonly FaultKind[] = CLIENT_FAULTS): fc.Arbitrary<GeneratedCase> {
  if (t.service !== undefined) {
    const module = t.serviceModule ?? t.service.name;
    registerService(module, t.service);
    return serviceCaseArbitrary(t.service, module, 'tool_call', faults).map(onClientEpoch);
  }
  return scenarioArbitrary({ variant: t.variant ?? 'key_atomic', keySource: 'tool_call', faults }).map(onClientEpoch);
}

/**
 * A client's case on the present's clock (`client.epochMs`: 2026-01-01,
 * src/sim/epoch.ts), as a service's is on its own: a client that tests a
 * timestamp for truthiness (`if (!openedAt)`) read a failure at t = 0 on
 * the 1970 clock as none, and a module-level `Date.now()` was 0 in every
 * simulated process, where production processes start in different ms.
 */
function onClientEpoch(c: GeneratedCase): GeneratedCase {
  return { ...c, scenario: withClientEpoch(c.scenario) };
}

/** `s` with its client on the simulation's epoch (what every newly found client file records). */
export function withClientEpoch(s: Scenario): Scenario {
  return { ...s, client: { ...s.client, epochMs: SIM_EPOCH_MS } };
}

/** A client counterexample, written (or not) as a replayable scenario file. */
export interface ClientCounterexample {
  scenario: Scenario;
  run: ClientRun;
  file?: string;
  violations: Violation[];
  size: ReturnType<typeof scenarioSize>;
  /** What the minimiser did and could not show (as for services and built-in claims; `stopped` only when the shrink budget stopped it). */
  minimised: Pick<Minimised, 'preemptionsMinimal' | 'removed' | 'undecided' | 'errored' | 'runs' | 'stopped'>;
  /** Every dimension not shown minimal, in words (empty: every one-step simplification was tried and none fails). */
  notMinimal: string[];
  /** The command that replays the file. */
  replay: string;
}

/**
 * Records a failing case of a retry client as a scenario file: the case is
 * first minimised ({@link minimiseCounterexample}: fewest preemptions, then
 * no removable operation, worker, fault or instance — the harness's own
 * knobs do not apply to a user's client), then written with the client's
 * module and name, the schedule the run took and `expect` (effects per
 * operation, the broken invariants). The file is replayed strictly once
 * before it is written, so what is written is known to reproduce.
 * `module` undefined: the file names the client only, and
 * `retrysim replay --client PATH` supplies the module. `choices` replays
 * the failing run when it was not the case's own list (a PCT schedule).
 * `timeLimit` (the shrink budget) stops the minimiser: the case in hand is
 * recorded all the same, said not known to be minimal.
 */
export async function recordClientCounterexample(client: RetryClient, c: GeneratedCase, o: { module?: string; service?: ServiceDefinition; serviceModule?: string; perProcess?: () => Promise<RetryClient>; seed?: number; foundDir?: string; choices?: ChoiceSource; onRun?: (tried: number) => void; timeLimit?: MinimiseOptions['timeLimit']; foundBy?: FoundBy } = {}): Promise<ClientCounterexample> {
  const opts = { ...(o.service ? { service: o.service } : {}), ...(o.perProcess ? { perProcess: o.perProcess } : {}) };
  const runOn = (s: Scenario, choices: ChoiceSource) => runClientScenario(s, client, { choices, ...opts });
  const found = await runOn(c.scenario, o.choices ?? new ListChoice(c.choices));
  const target = found.violations[0]?.invariant;
  if (target === undefined) throw notRerun(client, o.module, 'the failing case passed');
  const isHit = (r: ClientRun) => r.violations.some((v) => v.invariant === target);
  let tried = 0;
  let m: Minimised;
  try {
    m = await minimiseCounterexample<ClientRun>(c.scenario, found.result.choices.map((x) => x.chosen), {
      isHit,
      run: async (s, choices) => {
        try {
          return await runOn(s, choices);
        } finally {
          o.onRun?.(++tried);
        }
      },
      userClient: true,
      ...(o.timeLimit !== undefined ? { timeLimit: o.timeLimit } : {}),
    });
  } catch (e) {
    if (e instanceof CaseDoesNotFailError) throw notRerun(client, o.module, `the failing case broke ${target}, then passed`);
    throw e;
  }
  const first = await runOn(m.scenario, new ListChoice(m.choices));
  if (!isHit(first)) throw notRerun(client, o.module, `the minimised case broke ${target}, then passed`);
  const invariants = [...new Set(first.violations.map((v) => v.invariant))].sort();
  const notMinimal = notShownMinimal(m);
  const scenario: Scenario = {
    ...m.scenario,
    name: `${client.name}: shrunk counterexample`,
    // A vitest property was not `retrysim check`: its file says so, with the command that replays it.
    description: `Found for retry client '${client.name}'${o.foundBy === 'vitest' ? ` by a vitest property (retrysim's vitest helper${o.seed !== undefined ? `, seed ${o.seed}` : ''}; replay with retrysim replay --client ${o.module ?? '<your client module>'} <this file>)` : o.seed !== undefined ? ` (seed ${o.seed})` : ''}: ${first.violations.map((v) => `${v.invariant} — ${v.detail}`).join('; ')}.` +
      (notMinimal.length > 0 ? ` Not shown minimal: ${notMinimal.join('; ')}.` : '') +
      // The file records it (client.moduleLoads) and replay loads it so; the sentence tells its reader why.
      (o.perProcess !== undefined ? ' Found with the client\'s module loaded once per simulated client process (each call its own copy).' : ''),
    // The user's service the client ran against, as a service's own file names it.
    ...(o.service !== undefined ? { service: serviceInFile(m.scenario.service, o.service, o.serviceModule) } : {}),
    // Found with one load of the client's module per simulated client process: it replays only so (absent: once).
    client: { ...m.scenario.client, ...(o.module !== undefined ? { module: o.module } : {}), name: client.name, ...(o.perProcess !== undefined && o.module !== undefined ? { moduleLoads: 'per-process' as const } : {}) },
    schedule: scheduleOf(first.result.choices),
    expect: { reports: first.reports, violations: invariants },
  };
  // The file must reproduce by itself: replay it exactly as `retrysim replay` will.
  const again = await runClientScenario(scenario, client, { strictReplay: true, ...opts });
  const got = [...new Set(again.violations.map((v) => v.invariant))].sort();
  if (got.join() !== invariants.join()) throw notRerun(client, o.module, `the counterexample broke [${invariants.join(', ')}], then on replay [${got.join(', ')}]`);
  const size = scenarioSize(scenario, first.workers.reduce((n, w) => n + w.sent.length, 0));
  let file: string | undefined;
  if (o.foundDir !== undefined) {
    mkdirSync(o.foundDir, { recursive: true });
    const safe = client.name.replace(/[^A-Za-z0-9_-]/g, '_');
    file = join(o.foundDir, `${safe}-${invariants[0] ?? 'violation'}-${hashJson(scenario).slice(0, 8)}.json`);
    writeFileSync(file, printScenario(scenario));
  }
  // The module is named on the line even though the file records it: replay
  // imports a module a file names only inside the current directory, so a
  // line without it would not run from anywhere else.
  const replay = file === undefined ? '(not written)' : `retrysim replay --client ${o.module !== undefined ? shellArg(o.module) : '<your client module>'} ${shellArg(file)} --trace`;
  return {
    scenario, run: first, ...(file !== undefined ? { file } : {}), violations: first.violations, size,
    minimised: { preemptionsMinimal: m.preemptionsMinimal, removed: m.removed, undecided: m.undecided, errored: m.errored, runs: m.runs, ...(m.stopped ? { stopped: m.stopped } : {}) },
    notMinimal, replay,
  };
}

/** A {@link ClientError} for a failing case that did not fail again: `check --client` then tries one module load per client process. */
export class ClientNotRerunError extends ClientError {}

/**
 * A client whose failing case does not fail again in the same process: not
 * a bug in retrysim (the minimiser would otherwise stop on it as one) but
 * a client whose behaviour depends on more than the run — one line, exit 2.
 */
function notRerun(client: RetryClient, module: string | undefined, what: string): ClientError {
  return new ClientNotRerunError(module ?? client.name, `client '${client.name}' does not fail the same way twice on the same run (${what}): its behaviour depends on more than the run — most often state kept across calls (a retry budget, a circuit breaker, a counter at module level or in the client object), which lives on from one simulated run to the next in a campaign, or real time or I/O; ${CLIENT_STATE_HOME}`);
}

/** Options of {@link runClientCampaign}. */
export interface ClientCampaignOptions extends ClientTarget {
  client: RetryClient;
  /** The client's module path (recorded in the file). */
  module?: string;
  faults?: readonly FaultKind[];
  /**
   * random (default): fast-check-generated schedules; pct: generated
   * scenarios, PCT schedules (depth 3, k fitted to each case); exhaustive:
   * every schedule of the client's small scenarios ({@link clientSmallScenarios}),
   * `runs` schedules at most per scenario.
   */
  explore?: ClientExplore;
  runs: number;
  seed: number;
  /** Where the counterexample goes; undefined: not written. */
  foundDir?: string;
  /**
   * Random and pct only: stop generating after this many ms (fast-check's
   * time limit; a failure found is still shrunk). A holding campaign that ran
   * fewer than {@link atLeast} scenarios is inconclusive.
   */
  timeBudgetMs?: number;
  /** The scenarios a holding verdict needs (default `runs`). */
  atLeast?: number;
  /**
   * Random and pct only: run only the run indices this slice owns (blocks of
   * 64 dealt round-robin over the shards, as for services and built-in
   * claims). Every case is still generated, in the same order, so a shard
   * runs exactly the cases the whole campaign would at its indices, and a
   * failure is found at the same run number and shrunk the same way.
   */
  slice?: Slice;
  /**
   * One simulated client process per worker: every run's calls each load
   * the client's module afresh (freshClientLoader, src/client/load.ts); see
   * `ClientRunOptions.perProcess`. Without it one load serves every call.
   */
  perProcess?: () => Promise<RetryClient>;
  /** After each run judged before a failure: how many so far (a person's progress). */
  onProgress?: (done: number) => void;
  /** After a failure at run `at`: each of the minimiser's runs, `tried` so far. */
  onShrink?: (tried: number, at: number) => void;
  /** Measures elapsed ms for {@link shrinkBudgetMs} (injected: simulated code never reads real time). */
  clockMs?: () => number;
  /**
   * Wall ms on `clockMs` that shrinking a failure may take, from the moment
   * it is found (fast-check's shrinking and the minimiser together);
   * undefined: only the run counts limit it. When it runs out, the case in
   * hand — which fails — is recorded all the same, and said not known to be
   * minimal ({@link ClientCounterexample.notMinimal}).
   */
  shrinkBudgetMs?: number;
}

/** How a client campaign picks its runs. */
export type ClientExplore = 'random' | 'pct' | 'exhaustive';

/** What a client campaign found. */
export interface ClientCampaignResult {
  client: string;
  seed: number;
  explore: ClientExplore;
  /** Exhaustive: every schedule of every small scenario ran (false when the limit or a failure stopped it). */
  complete?: boolean;
  /** Why the verdict is inconclusive, in one sentence. */
  inconclusive?: string;
  faults: FaultKind[];
  /** Scenarios run (schedules, exhaustive): all of them, or up to and including the first failure; a shard's own (see `slice`). */
  runs: number;
  /** Random and pct without a failure: run indices generated (every slice's, a sharded campaign's too), 0..generated-1. */
  generated?: number;
  verdict: 'holds' | 'fails' | 'inconclusive';
  /** 1-based number of the first failing scenario. */
  firstFailureRun?: number;
  /** Wall ms on `clockMs` from the campaign's start to its first failure (as check --service's). */
  firstFailureMs?: number;
  counterexample?: ClientCounterexample;
  /** Without a failure: how many runs reached each situation of the client's fault space (DESIGN invariant 9). */
  coverage?: Coverage;
  /** Inconclusive because no request ever succeeded (random, pct): the first answer outside 2xx, as the reason quotes it. */
  firstAnswer?: string;
}

/** Runs one case counting what it reached into `counts`, and the table those counts make. */
function counter(o: ClientCampaignOptions, faults: readonly FaultKind[], space: { slowAtAnyStep: boolean; killAtAnswer: boolean }) {
  const counts: CoverageCounts = {};
  const opts = { ...(o.service ? { service: o.service } : {}), ...(o.perProcess ? { perProcess: o.perProcess } : {}) };
  /** The first answer outside 2xx of the counted runs: quoted when no request ever succeeded. */
  let first: Refusal | undefined;
  return {
    run: async (s: Scenario, choices: ChoiceSource, flight?: InFlight) => {
      // A fresh count per run: a run that throws (a broken client) counts nothing, nor one a time budget abandoned.
      const reached = new Reached();
      const r = await runClientScenario(s, o.client, { choices, ...opts, reached });
      if (flight?.abandoned !== true) {
        countRun(counts, reached);
        first = preferRefusal(first, firstRefusal(r.workers));
      }
      return r;
    },
    coverage: (runs: number): Coverage => coverageOf(clientSituationsOf(o.service ?? builtinService(o.variant ?? 'key_atomic'), faults, space, o.client.deadlineMs), counts, runs),
    firstAnswer: (): string | undefined => first?.line,
  };
}

/**
 * The property campaign on a retry client: fast-check generates scenarios
 * (operations, faults, timing, interleavings) around the target service,
 * the client runs each on virtual time, and the first failure is shrunk,
 * minimised and recorded as a replayable file.
 */
export async function runClientCampaign(o: ClientCampaignOptions): Promise<ClientCampaignResult> {
  const service = o.service;
  if (service !== undefined) registerService(o.serviceModule ?? service.name, service);
  const explore = o.explore ?? 'random';
  const faults = [...(o.faults ?? CLIENT_FAULTS)];
  const opts = { ...(service ? { service } : {}), ...(o.perProcess ? { perProcess: o.perProcess } : {}) };
  if (explore === 'exhaustive') return exhaustiveClient(o, faults);
  const choicesOf = async (c: GeneratedCase): Promise<ChoiceSource> => {
    if (explore !== 'pct') return new ListChoice(c.choices);
    // PCT's k: the case measured by a probe run, as for services and built-in claims.
    const probe = new PctProbe();
    await runClientScenario(c.scenario, o.client, { choices: probe, ...opts });
    return campaignPct(c.scenario.seed, probe.steps);
  };
  let done = 0;
  let index = -1;
  let firstFailureRun: number | undefined;
  let firstFailureMs: number | undefined;
  const clock = o.clockMs ?? (() => 0);
  const t0 = clock();
  /** The run that first stopped the campaign (a client waiting on nothing the run settles, a run that never ends). */
  let firstStop: { run: number; shrinking: boolean } | undefined;
  /** The shrink budget, started at the first failure: fast-check's shrinking stops at it too. */
  let shrinkLimit: MinimiseOptions['timeLimit'];
  const slice = o.slice;
  const counted = counter(o, faults, { slowAtAnyStep: service !== undefined, killAtAnswer: service !== undefined });
  // A run the time budget abandons finishes before the campaign goes on (in-flight.ts).
  const flight = new InFlight();
  const prop = fc.asyncProperty(clientCaseArbitrary(o, faults), flight.track(async (c) => {
    if (firstFailureRun !== undefined && shrinkLimit?.expired() === true) return true;
    // Before a failure every call is the next run index; another shard's index passes untouched (shrinking runs them all).
    if (firstFailureRun === undefined) {
      index++;
      if (slice !== undefined && !owns(slice, index)) return true;
    }
    let r: ClientRun;
    try {
      r = await counted.run(c.scenario, await choicesOf(c), flight);
    } catch (e) {
      // fast-check shrinks a throw as a failure: the first one's run number is what the line names.
      if ((e instanceof ClientError || e instanceof ServiceError) && e.ofTheRun) firstStop ??= { run: firstFailureRun ?? index + 1, shrinking: firstFailureRun !== undefined };
      throw e;
    }
    if (flight.abandoned) return true;
    if (firstFailureRun === undefined) {
      done++;
      o.onProgress?.(done);
    }
    if (r.violations.length === 0) return true;
    if (firstFailureRun === undefined && o.shrinkBudgetMs !== undefined) shrinkLimit = shrinkTimeLimit(o.clockMs ?? (() => 0), o.shrinkBudgetMs);
    // The run's number in the whole campaign (a shard's own count of runs would be another).
    firstFailureRun ??= index + 1;
    firstFailureMs ??= clock() - t0;
    return false;
  }));
  const details = await fc.check(prop, { numRuns: o.runs, seed: o.seed, ...(o.timeBudgetMs !== undefined ? { interruptAfterTimeLimit: o.timeBudgetMs, markInterruptAsFailure: false } : {}) });
  await flight.settle();
  const base = { client: o.client.name, seed: o.seed, explore, faults };
  // A budget spent before the first run ends is "failed" with no counterexample to fast-check: nothing failed here.
  if (!details.failed || (details.interrupted && details.counterexample === null)) {
    const generated = details.failed ? 0 : details.numRuns;
    // A shard ran the indices it owns among those generated; fewer than asked is inconclusive, never a ✓.
    const ran = slice === undefined ? generated : ownedCount(slice, generated);
    const coverage = counted.coverage(ran);
    const atLeast = slice === undefined ? (o.atLeast ?? o.runs) : ownedCount(slice, o.atLeast ?? o.runs);
    const part = { ...base, runs: ran, generated, coverage };
    if (ran < atLeast) return { ...part, verdict: 'inconclusive', inconclusive: `${ran} of ${atLeast} scenarios ran${details.interrupted ? ' (the time budget ran out)' : ''}` };
    const firstAnswer = counted.firstAnswer();
    const vacuous = neverSucceeded(coverage, 'runs', firstAnswer);
    // A shard carries the answer it saw first, for merge to quote.
    if (vacuous !== undefined) return { ...part, verdict: 'inconclusive', inconclusive: vacuous, ...(firstAnswer !== undefined ? { firstAnswer } : {}) };
    return { ...part, verdict: 'holds' };
  }
  if (details.errorInstance && !(details.errorInstance instanceof Error && /Property failed by returning false/.test(details.errorInstance.message))) {
    const e = details.errorInstance;
    // The smallest case fast-check found stopping, written so that replay --trace shows what led there.
    if ((e instanceof ClientError || e instanceof ServiceError) && e.ofTheRun && firstStop !== undefined && details.counterexample !== null) {
      const [stoppedCase] = details.counterexample as [GeneratedCase];
      adoptStop(e, await writeClientStoppedRun(o.client, stoppedCase, await choicesOf(stoppedCase), { ...o, ...(o.module !== undefined ? { module: o.module } : {}), seed: o.seed, ...(o.shrinkBudgetMs !== undefined ? { timeLimit: shrinkTimeLimit(o.clockMs ?? (() => 0), o.shrinkBudgetMs) } : {}) }, firstStop));
    }
    throw e;
  }
  const [c] = details.counterexample as [GeneratedCase];
  const at = firstFailureRun ?? details.numRuns;
  const counterexample = await recordClientCounterexample(o.client, c, { module: o.module, seed: o.seed, foundDir: o.foundDir, ...opts, ...(explore === 'pct' ? { choices: await choicesOf(c) } : {}), ...(o.onShrink ? { onRun: (n: number) => o.onShrink!(n, at) } : {}), ...(shrinkLimit !== undefined ? { timeLimit: shrinkLimit } : {}) });
  return { ...base, runs: firstFailureRun ?? details.numRuns, verdict: 'fails', ...(firstFailureRun !== undefined ? { firstFailureRun } : {}), ...(firstFailureMs !== undefined ? { firstFailureMs } : {}), counterexample };
}

/**
 * Bounded exhaustive exploration of a retry client: every schedule of each
 * of its small scenarios, up to reordering steps that commute. The
 * client's own steps (the bridge's task, each fetch's task) declare no
 * footprint, so they conflict with everything and every order of them is
 * run: sound, only less reduced than a service's search. `fails` at the
 * first violating schedule, minimised and recorded like any client
 * counterexample; `holds` only when every schedule of every small scenario
 * ran; a search the schedule limit stopped is `inconclusive`.
 */
async function exhaustiveClient(o: ClientCampaignOptions, faults: FaultKind[]): Promise<ClientCampaignResult> {
  const service = o.service;
  const module = o.serviceModule ?? service?.name;
  const opts = { ...(service ? { service } : {}), ...(o.perProcess ? { perProcess: o.perProcess } : {}) };
  const base = { client: o.client.name, seed: o.seed, explore: 'exhaustive' as const, faults };
  const fails = (r: ClientRun) => r.violations.length > 0;
  let schedules = 0;
  let complete = true;
  const clock = o.clockMs ?? (() => 0);
  const t0 = clock();
  const counted = counter(o, faults, { slowAtAnyStep: true, killAtAnswer: true });
  for (const s of clientSmallScenarios(service ? { service, module: module! } : { variant: o.variant ?? 'key_atomic' }, faults)) {
    const scenario = { ...s, seed: o.seed };
    const e = await exploreAll((choices) => counted.run(scenario, choices), {
      schedulesMax: o.runs,
      reduce: true,
      keep: fails,
      onSchedule: (x) => {
        o.onProgress?.(schedules + x.index + 1);
        return !fails(x.result); // stop at the first failing schedule
      },
    });
    schedules += e.schedules;
    complete &&= e.complete;
    const failing = e.results[0];
    if (failing) {
      const firstFailureMs = clock() - t0;
      const timeLimit = o.shrinkBudgetMs !== undefined ? shrinkTimeLimit(o.clockMs ?? (() => 0), o.shrinkBudgetMs) : undefined;
      const counterexample = await recordClientCounterexample(o.client, { scenario, choices: failing.choices }, { module: o.module, seed: o.seed, foundDir: o.foundDir, ...opts, ...(o.onShrink ? { onRun: (n: number) => o.onShrink!(n, schedules) } : {}), ...(timeLimit !== undefined ? { timeLimit } : {}) });
      return { ...base, runs: schedules, verdict: 'fails', complete: false, firstFailureRun: schedules, firstFailureMs, counterexample };
    }
  }
  const coverage = counted.coverage(schedules);
  const vacuous = neverSucceeded(coverage, 'schedules', counted.firstAnswer());
  if (vacuous !== undefined) return { ...base, runs: schedules, verdict: 'inconclusive', complete, inconclusive: vacuous, coverage };
  if (!complete) return { ...base, runs: schedules, verdict: 'inconclusive', complete, inconclusive: `the schedule limit (${o.runs} per small scenario) stopped the enumeration before every schedule ran`, coverage };
  return { ...base, runs: schedules, verdict: 'holds', complete, coverage };
}
