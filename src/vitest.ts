/**
 * `retrysim/vitest`: properties over your own service with
 * `@fast-check/vitest`. Generated cases are whole scenarios (operations,
 * workers, faults, timing, the interleaving); a failing case is shrunk by
 * fast-check, then minimised and written as a scenario file that
 * `retrysim replay --service` replays, and the test's failure message says
 * where it is.
 *
 * @example
 * import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
 * import { expect } from 'vitest';
 * import service from './service.ts';
 *
 * test.prop([serviceCases(service)], replayable(service, { module: 'service.ts' }))('one payment per order', async (c) => {
 *   expect((await runServiceCase(service, c)).violations).toEqual([]);
 * });
 */
import fc from 'fast-check';
import { count, scenarioSize, sizeText, type FaultKind, type GeneratedCase } from './scenario/arbitraries.js';
import { runClientScenario, sentDigest, type ClientRun, type RetryClient } from './client/run.js';
import type { BuiltinName as Variant } from './tracker/builtin.js';
import type { KeySource } from './harness/keys.js';
import { runScenario, type ScenarioRun } from './scenario/run.js';
import { ListChoice } from './sim/choice/list.js';
import { stoppedRunLine, writeStoppedRun } from './service/stopped-run.js';
import { writeClientStoppedRun } from './client/stopped-run.js';
import type { ServiceDefinition } from './service/definition.js';
import { minimiseAndWrite, neverSucceeded, noteAnswers, serviceCaseArbitrary, serviceFaults, type Answers } from './service/campaign.js';
import { existsSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { appService, isHostedApp, moduleFlag, moduleLoadsOf } from './app/define.js';
import { isAppDescriptor, type AppDescriptor } from './app/descriptor.js';

import { MODULE_PROBE_RUNS, moduleStateLine, runModuleProbe } from './app/module-probe.js';
import { carriedStateLine, FirstRuns } from './app/carried-state.js';
import { PER_PROCESS_ENV } from './app/per-process.js';
import { CLIENT_STATE_HOME, freshReplayProblem, notReproducedMessage, serviceNotReproduced } from './cli/fresh-replay.js';
import { fileURLToPath } from 'node:url';
import { moduleKey, registerService } from './service/registry.js';
import { validateDefinition } from './service/validate.js';
import { awaitAsyncSetup } from './service/async-setup.js';
import { callerFile, moduleDefining } from './service/defined-in.js';
import { shellArg } from './report/shell.js';
import { clientCaseArbitrary, CLIENT_FOUND_DIR, recordClientCounterexample, runClientCampaign, type ClientTarget } from './client/campaign.js';
import { ClientError, freshClientLoader, isRetryClient, whyNotClient } from './client/load.js';
import { clientModuleStateLine } from './client/module-state.js';
import { firstRefusal, preferRefusal, type Refusal } from './client/coverage.js';
import { answered2xx } from './client/checks.js';
import { Reached } from './service/reached.js';
import { ServiceError } from './service/errors.js';
import { shrinkTimeLimit, type MinimiseOptions } from './campaign/minimise.js';
import { SHRINK_RUNS_MAX } from './campaign/run.js';
import { PROGRESS_NOT_JUDGED } from './campaign/coverage.js';
import { checkedWhereUsed, checkOptions, clientFaultsCheck, clockCheck, dirCheck, keySourceCheck, moduleCheck, serviceFaultsCheck, variantCheck } from './vitest-options.js';

/**
 * An app descriptor given where a service is expected — as `check
 * --service` takes one — is run as its service, the same one for every
 * call with that descriptor (the helper keys its state by the object).
 * Until 2026-12 `serviceCases(app)` said "tables: missing (expected
 * array)", and only `appService(app)` worked.
 */
const appServices = new WeakMap<AppDescriptor, ServiceDefinition>();
function asService(x: ServiceDefinition | AppDescriptor): ServiceDefinition {
  if (!isAppDescriptor(x)) return x as ServiceDefinition;
  let s = appServices.get(x);
  if (s === undefined) appServices.set(x, (s = appService(x)));
  return s;
}

/** Where counterexample files go unless told otherwise (as for every command). */
const FOUND_DIR = CLIENT_FOUND_DIR;

/**
 * `@fast-check/vitest` (and vitest under it) are optional peers: a project
 * that installed only retrysim got Node's "Cannot find package
 * '@fast-check/vitest' imported from …/retrysim/dist/vitest.js", which
 * names the file that asked, not what to install.
 */
const fcVitest = await import('@fast-check/vitest').catch((e: unknown) => {
  const missing = (e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' ? /Cannot find package '((?:@fast-check\/)?vitest)'/.exec(String((e as Error).message))?.[1] : undefined;
  if (missing !== undefined) throw new Error(`retrysim/vitest: '${missing}' is not installed in this project; the helper needs vitest and @fast-check/vitest: npm install --save-dev vitest @fast-check/vitest`);
  throw e;
});
export const test: typeof fcVitest.test = fcVitest.test;
export const it: typeof fcVitest.it = fcVitest.it;
// The fast-check the cases are built with (@fast-check/vitest's `fc` is the same namespace when npm dedupes it).
export * as fc from 'fast-check';
export type { GeneratedCase } from './scenario/arbitraries.js';

/** Options of {@link serviceCases}. */
export interface ServiceCaseOptions {
  /**
   * The service's module: a path as `retrysim replay --service` will be
   * given it, or its file URL (`new URL('./service.ts', import.meta.url)`,
   * written relative to the working directory). Default: the service's name.
   */
  module?: string | URL;
  /** The client's key source. Default `tool_call`. */
  keySource?: KeySource;
  /** Which faults to generate. Default: the standard fault space of `retrysim check --service`. */
  faults?: readonly FaultKind[];
}

/** Each definition's module as its user named it (serviceCases or replayable `module`). */
const modules = new WeakMap<ServiceDefinition, string>();
/** ...or as found from where its functions were written, when not named (null: looked for, not found). */
const foundModules = new WeakMap<ServiceDefinition, string | null>();
/** The test file that called serviceCases or replayable first, for each definition and client: where to look for its module. */
const callers = new WeakMap<object, string>();
function noteCaller(x: object): void {
  if (callers.has(x)) return;
  const f = callerFile();
  if (f !== undefined) callers.set(x, f);
}
/** The key source and faults each service's cases were generated with: the per-process probe of an app generates the same. */
const caseOptions = new WeakMap<ServiceDefinition, { keySource?: KeySource; faults?: readonly FaultKind[] }>();

/**
 * How long shrinking a failure may take unless told: the default of
 * `retrysim check --service/--app/--client --shrink-budget` (60 s).
 */
export const DEFAULT_SHRINK_BUDGET_MS = 60_000;

/** The shrink limits a reporter ({@link replayable}, {@link explainClient}) set for its service or client. */
interface ShrinkSettings {
  budgetMs: number;
  clockMs: () => number;
  /** The clock as the caller gave it (undefined: the machine's), to tell two reporters' settings apart. */
  givenClock?: () => number;
  /** Shrink candidates fast-check may run before the minimiser takes over: the CLI's for the same kind of campaign. */
  runsMax: number;
}

/** Keyed by the service definition or the client object the reporter was made for, and that the property runs its cases with. */
const shrinkSettings = new WeakMap<object, ShrinkSettings>();

/**
 * The shrinking of one generated case and everything shrunk from it. The
 * owner (the service or client the property ran the case on) is learnt when
 * {@link runServiceCase} or {@link runClientCase} runs a case; a reporter
 * made for that owner sets the limits. Then fast-check's shrinking stops
 * where `check --service/--client` stops it: for a service after
 * {@link SHRINK_RUNS_MAX} candidates (the minimiser takes over from there;
 * a client campaign has no such cap), or when the shrink budget, started at
 * the first failure, runs out. The same seed and the
 * same arbitrary so shrink along the same path as the CLI, to the same
 * counterexample.
 */
class ShrinkPhase {
  owner: object | undefined;
  tried = 0;
  limit: MinimiseOptions['timeLimit'];

  /** The time limit of this failure's shrinking (started on first use), or undefined when no reporter limits it. */
  timeLimit(): MinimiseOptions['timeLimit'] {
    const set = this.owner === undefined ? undefined : shrinkSettings.get(this.owner);
    if (set === undefined) return undefined;
    return (this.limit ??= shrinkTimeLimit(set.clockMs, set.budgetMs));
  }

  /** Whether fast-check may run one more shrink candidate. */
  allow(): boolean {
    const limit = this.timeLimit();
    if (limit === undefined) return true; // no reporter of ours: fast-check's own shrinking, unbounded
    if (this.tried >= shrinkSettings.get(this.owner!)!.runsMax || limit.expired()) return false;
    this.tried++;
    return true;
  }
}

const phases = new WeakMap<object, ShrinkPhase>();

/** Notes who ran a case (a service or a client): its reporter's shrink limits apply to the case's shrinking. */
function ranBy(c: GeneratedCase, owner: object): void {
  const p = phases.get(c);
  if (p !== undefined) p.owner ??= owner;
}

/** An arbitrary of cases whose shrinking a {@link ShrinkPhase} bounds; the cases themselves are the inner arbitrary's. */
class BoundedShrink extends fc.Arbitrary<GeneratedCase> {
  constructor(private readonly inner: fc.Arbitrary<GeneratedCase>) {
    super();
  }

  generate(mrng: fc.Random, biasFactor: number | undefined): fc.Value<GeneratedCase> {
    const v = this.inner.generate(mrng, biasFactor);
    phases.set(v.value_, new ShrinkPhase());
    return v;
  }

  canShrinkWithoutContext(value: unknown): value is GeneratedCase {
    return this.inner.canShrinkWithoutContext(value);
  }

  shrink(value: GeneratedCase, context: unknown): fc.Stream<fc.Value<GeneratedCase>> {
    // A value fast-check did not get from us (shrunk without context): a phase of its own.
    let phase = phases.get(value);
    if (phase === undefined) phases.set(value, (phase = new ShrinkPhase()));
    const p = phase;
    // Lazy: asked as fast-check pulls each candidate, right before it runs it.
    return this.inner.shrink(value, context).takeWhile(() => p.allow()).map((v) => (phases.set(v.value_, p), v));
  }
}

/** The limits of a reporter's `shrinkBudgetMs` and `clockMs`, checked (a clear line, not a silent default, for a bad value). */
function shrinkSettingsOf(o: { shrinkBudgetMs?: number; clockMs?: () => number }, what: string, runsMax: number): ShrinkSettings {
  const budgetMs = o.shrinkBudgetMs ?? DEFAULT_SHRINK_BUDGET_MS;
  if (!(typeof budgetMs === 'number' && budgetMs > 0)) throw new TypeError(`retrysim: ${what}: shrinkBudgetMs must be a number of ms above 0 (Infinity: no time limit), got ${String(budgetMs)}`);
  // The machine's clock, read between runs by the test's reporter, never by the simulated code.
  return { budgetMs, runsMax, givenClock: o.clockMs, clockMs: o.clockMs ?? (() => performance.now()) }; // real-time: allowed (the shrink budget is wall-clock, as the CLI's)
}

/**
 * Sets the shrink limits of `owner` (a service or a client). They are the
 * owner's, not one property's: fast-check shrinks before any reporter runs,
 * and only the object the cases run on links a case to its limits. Two
 * reporters giving one owner different limits (two properties in one file,
 * one with a 1 ms budget) would silently share the last one, so that is
 * refused in one line, with the way out.
 */
function setShrinkSettings(owner: object, set: ShrinkSettings, what: string): void {
  const had = shrinkSettings.get(owner);
  if (had !== undefined && (had.budgetMs !== set.budgetMs || had.givenClock !== set.givenClock)) {
    throw new TypeError(`retrysim: ${what}: another property already set this object's shrink limits (shrinkBudgetMs ${had.budgetMs} here ${set.budgetMs}, or another clockMs); the limits belong to the object the cases run on, so give this property a copy of its own (Object.create(object): a class instance keeps its methods, as { ...object } does not) in serviceCases/clientCases, the run call and here`);
  }
  shrinkSettings.set(owner, set);
}

function moduleOf(def: ServiceDefinition, module?: string | URL): string {
  if (module !== undefined) modules.set(def, module instanceof URL ? moduleKey(fileURLToPath(module)) : module);
  // Unnamed and not yet found, cases are generated under the definition's name; a file written names the module found.
  const m = modules.get(def) ?? foundModules.get(def) ?? def.name;
  registerService(m, def);
  return m;
}

/**
 * The module a counterexample file names and its replay line loads: as
 * named, else the user's file that defines the definition's functions and
 * default-exports a definition of its name (src/service/defined-in.ts);
 * `known: false` when neither (the line then says how to name it).
 */
async function fileModuleOf(def: ServiceDefinition, module?: string | URL): Promise<{ module: string; known: boolean }> {
  moduleOf(def, module);
  if (!modules.has(def) && !foundModules.has(def)) {
    // An app's handle and effects are retrysim's wrappers; its operation's functions are the descriptor's own.
    const fns = [def.handle, def.setup, def.memory, def.operation?.body, def.operation?.resultId, def.effects?.of, def.effects?.owner, def.effects?.total];
    const found = await moduleDefining(fns, (mod) => ((mod.default ?? mod.service) as { name?: unknown } | undefined)?.name === def.name, callers.get(def));
    foundModules.set(def, found ?? null);
  }
  const m = moduleOf(def);
  return { module: m, known: modules.has(def) || typeof foundModules.get(def) === 'string' };
}

/** What a replay line without a known module says after it. */
function nameTheModule(def: ServiceDefinition): string {
  const what = isHostedApp(def) ? 'app' : 'service';
  return `  (${def.name} is the ${what}'s name, not a file: its module could not be found from where its functions are written; replayable(${what}, { module: new URL('./${what}.ts', import.meta.url) }) names it, and the file then replays as printed)`;
}

/**
 * The arbitrary of scenarios for a service: pass it to `test.prop` or
 * `fc.asyncProperty`. Checks the definition first (a clear message, not a
 * stack trace, when it is malformed).
 */
export function serviceCases(given: ServiceDefinition | AppDescriptor, o: ServiceCaseOptions = {}): fc.Arbitrary<GeneratedCase> {
  const def = asService(given);
  validateDefinition(def, typeof o?.module === 'string' ? o.module : 'service');
  checkOptions(`serviceCases(${def.name})`, o, { module: moduleCheck, keySource: keySourceCheck, faults: serviceFaultsCheck(def) });
  noteCaller(def);
  caseOptions.set(def, { ...(o.keySource !== undefined ? { keySource: o.keySource } : {}), ...(o.faults !== undefined ? { faults: o.faults } : {}) });
  return new BoundedShrink(serviceCaseArbitrary(def, moduleOf(def, o.module), o.keySource, o.faults).map((c) => (serviceMade.set(c, def.name), c)));
}

/**
 * The simulated run last started here. A property given fast-check's
 * `interruptAfterTimeLimit` has its run raced against a timer and, when the
 * timer wins, fast-check goes on without it: the run carries on, holding the
 * process-wide kernel clock, and the next property's first case (or a
 * reporter minimising) failed with "another run's kernel clock is
 * installed" — a false failure of a test that did nothing wrong. Each run
 * here, and each reporter, starts after the one before has ended; an
 * abandoned run's outcome is nobody's.
 */
let lastRun: Promise<unknown> = Promise.resolve();

/** Runs `run` once the run before it (abandoned or not) has ended. */
function afterLastRun<T>(run: () => Promise<T>): Promise<T> {
  const p = lastRun.then(run, run);
  lastRun = p.then(() => undefined, () => undefined);
  return p;
}

/**
 * The service each service case was made for (serviceCases), by name. A
 * service case handed to runClientCase, or a client case (clientCases) to
 * runServiceCase, is refused in one line: until 2026-12 either ran, and
 * passed, against another target than the one the test named (a service
 * case run by a client went to the built-in key_atomic).
 */
const serviceMade = new WeakMap<GeneratedCase, string>();

/** Runs one generated case against the service; `violations` is empty when every invariant held. */
export async function runServiceCase(given: ServiceDefinition | AppDescriptor, c: GeneratedCase): Promise<ScenarioRun> {
  const def = asService(given);
  if (clientTargets.has(c)) throw new TypeError(`retrysim: runServiceCase(${def.name}): this case was made by clientCases(), for a retry client: run it with runClientCase(client, c); a service's cases come from serviceCases(service)`);
  moduleOf(def);
  ranBy(c, def);
  // An `async setup`, awaited on the first case (its database is rebuilt from what it made on every run).
  await awaitAsyncSetup(def);
  // Reached only for the first exception a handler threw: an inconclusive report names it.
  const reached = new Reached();
  const r = await afterLastRun(() => runScenario(c.scenario, { choices: new ListChoice(c.choices), service: def, reached }));
  let a = answered.get(def);
  if (a === undefined) answered.set(def, (a = { runs: 0, succeeded: false, others: new Set() }));
  a.runs++;
  noteAnswers(a, r);
  a.threw ??= reached.threw;
  if (isHostedApp(def) && moduleLoadsOf(def) === 'once') {
    let first = firstRunsOf.get(def);
    if (first === undefined) firstRunsOf.set(def, (first = new FirstRuns()));
    first.note(a.runs - 1, c, r);
  }
  return r;
}

/** A hosted app's first cases since its property's last report, run again once it passes (carried-state.ts), as `check --app` does. */
const firstRunsOf = new WeakMap<ServiceDefinition, FirstRuns>();

/**
 * What each service answered since its property's last report: a property
 * that passes while no request was ever answered 2xx or made an effect (a
 * handler that throws every time) passes about code that never did its work,
 * and {@link replayable}'s reporter fails it as inconclusive (as `check
 * --service` exits 4).
 */
const answered = new WeakMap<ServiceDefinition, Answers & { runs: number }>();

/** Options of {@link replayable}. */
export interface ReplayableOptions {
  /** The service's module for the replay command. Default: as given to {@link serviceCases}. */
  module?: string | URL;
  /** Where the minimised counterexample is written. Default `.retrysim/found` (as every command writes them). */
  foundDir?: string;
  /**
   * Wall-clock ms that shrinking a failure may take, from the moment it is
   * found (fast-check's shrinking and the minimiser together), as `retrysim
   * check --service --shrink-budget`. Default {@link DEFAULT_SHRINK_BUDGET_MS}
   * (60 s); `Infinity`: only the run counts limit it. When it runs out, the
   * case in hand — which fails — is still written and replays, and the
   * failure message says that shrinking stopped at its time limit.
   */
  shrinkBudgetMs?: number;
  /** Measures elapsed ms for `shrinkBudgetMs`. Default: the machine's clock (`performance.now`); a test passes one of its own. */
  clockMs?: () => number;
}

/** The phase of a failing case fast-check reported, for the time limit its shrinking already started (or a fresh one). */
function limitOf(c: GeneratedCase, owner: object): MinimiseOptions['timeLimit'] {
  let p = phases.get(c);
  if (p === undefined) phases.set(c, (p = new ShrinkPhase()));
  p.owner ??= owner;
  return p.timeLimit();
}

/** The message's heading and its note, for a counterexample whose shrinking the time limit stopped or not. */
function stoppedText(cx: { minimised: { stopped?: { by: string } } }): { heading: string; note: string } {
  const s = cx.minimised.stopped;
  if (s === undefined) return { heading: 'minimised counterexample', note: '' };
  return {
    heading: `counterexample, shrinking stopped at its time limit (${s.by})`,
    note: `  not known to be minimal: shrinking stopped at its time limit (${s.by}); the counterexample fails and replays as written, and a larger shrinkBudgetMs shrinks it further\n`,
  };
}

/** The definitions whose passing property has said that progress was not judged (once each). */
const progressNoted = new WeakSet<ServiceDefinition>();

/**
 * fast-check parameters whose reporter turns the shrunk failure into a
 * minimised, replayable scenario file and names it in the failure message.
 * Spread your own parameters in: `{ ...replayable(service), numRuns: 500 }`.
 *
 * The message shows one counterexample — the minimised one, which is what
 * the file holds — with the seed and path that rerun the property and the
 * command that replays the file. fast-check's own report (its shrunk value,
 * a different and larger case) is shown only if minimising fails.
 */
export function replayable(given: ServiceDefinition | AppDescriptor, o: ReplayableOptions = {}): fc.Parameters<[GeneratedCase]> {
  const def = asService(given);
  validateDefinition(def, typeof o?.module === 'string' ? o.module : 'service');
  checkOptions(`replayable(${def.name})`, o, { module: moduleCheck, foundDir: dirCheck, shrinkBudgetMs: checkedWhereUsed, clockMs: clockCheck });
  setShrinkSettings(def, shrinkSettingsOf(o, `replayable(${def.name})`, SHRINK_RUNS_MAX), `replayable(${def.name})`);
  noteCaller(def);
  return {
    asyncReporter: async (details) => {
      await lastRun; // a run the property's time limit abandoned ends before anything here runs (see lastRun)
      const a = answered.get(def);
      answered.delete(def);
      const first = firstRunsOf.get(def);
      firstRunsOf.delete(def);
      if (!details.failed) {
        if (a !== undefined && a.runs > 0 && !a.succeeded) throw new Error(`retrysim: inconclusive, not passed: ${neverSucceeded(def, (await fileModuleOf(def, o.module)).module, a.runs, a)}`);
        if (isHostedApp(def) && moduleLoadsOf(def) === 'once' && details.numRuns > 0) await probeModules(def, details, o);
        const moved = first === undefined ? undefined : await afterLastRun(() => first.recheck(def));
        if (moved !== undefined) throw new Error(`retrysim: inconclusive, not passed: ${carriedStateLine(def.name, moved, `${PER_PROCESS_ENV}=1 retrysim check ${moduleFlag(def)} ${shellArg((await fileModuleOf(def, o.module)).module)}`)}`);
        // check says it under its verdict (src/campaign/coverage.ts); a passing property said nothing, and a
        // service that leaves a key "in progress" for ever after a kill passed without a word. Once per definition.
        if (def.progress === undefined && details.numRuns > 0 && !progressNoted.has(def)) {
          progressNoted.add(def);
          console.warn(`retrysim: ${isHostedApp(def) ? 'app' : 'service'} '${def.name}' passed, but ${PROGRESS_NOT_JUDGED}`);
        }
        return;
      }
      // A module retrysim cannot run as declared (an undeclared step, a step
      // after its answer) is no counterexample: check's one line, not a
      // shrunk case and "could not minimise the counterexample: …" (so until 2026-12).
      const c = details.counterexample?.[0];
      if (details.errorInstance instanceof ServiceError) {
        const e = details.errorInstance;
        // A run that stopped on its own course (a request never answered): the shrunk case, written for replay --trace, as check writes it.
        const stop = e.ofTheRun && c !== undefined ? await writeStoppedRun(def, (await fileModuleOf(def, o.module)).module, c, new ListChoice(c.choices), details.seed, o.foundDir ?? FOUND_DIR, { run: details.numRuns, shrinking: false }, 'vitest') : undefined;
        throw new Error(`retrysim: ${stop?.message ?? e.message} (retrysim check ${moduleFlag(def)} says the same, exit 2)${stop === undefined ? '' : `\n${stoppedRunLine(stop)}`}`);
      }
      if (c === undefined) throw new Error(fc.defaultReportMessage(details) ?? 'property failed');
      const { module, known } = await fileModuleOf(def, o.module);
      let cx;
      try {
        cx = await minimiseAndWrite(def, module, c, details.seed, o.foundDir ?? FOUND_DIR, undefined, undefined, limitOf(c, def), 'vitest');
      } catch (e) {
        throw new Error(`${fc.defaultReportMessage(details) ?? 'property failed'}\n\nretrysim: (could not minimise the counterexample: ${(e as Error).message})`);
      }
      // The file must replay as its reader will run it (a fresh process), as `check --service` holds it to.
      const problem = cx.file === undefined || !known ? undefined : freshReplayProblem(cx.file, [moduleFlag(def), module]);
      if (problem !== undefined) {
        rmSync(cx.file!, { force: true });
        // An app's state carried over from an earlier run (loaded once): as check --app, its runs again with one
        // load per simulated process, whose failure (two replicas with a Map each) is the finding; only if that
        // holds is "did not reproduce" the message (until 2026-12 it was, and check's failure was not shown).
        if (isHostedApp(def) && moduleLoadsOf(def) === 'once') {
          await probeModules(def, details, o, { how: 'carried', asked: details.runConfiguration.numRuns ?? 100 });
        }
        throw new Error(`${failedLine(details)}\n\nretrysim: ${serviceNotReproduced(def, problem)}`);
      }
      const s = cx.size;
      const stopped = stoppedText(cx);
      throw new Error(`${failedLine(details)}\n\n` +
        `retrysim: ${stopped.heading} (${sizeText(s)}):\n` +
        `  ${cx.violations.map((v) => `${v.invariant} (${v.op}): ${v.detail}`).join('\n  ')}\n` +
        (cx.notMinimal.length > 0 ? `  not shown minimal: ${cx.notMinimal.join('; ')}\n` : '') + stopped.note +
        `  written to ${cx.file}\n  replay: ${cx.replay}${known ? '' : `\n${nameTheModule(def)}`}`);
    },
  };
}

/**
 * A passing property over a hosted app ran it with the app's modules loaded
 * once, shared by every simulated instance and kept across restarts, which
 * no two real processes share. As `check --app` does, its first
 * {@link MODULE_PROBE_RUNS} runs (the same seed, faults and key source: the
 * same cases) run again with the modules loaded once per simulated process,
 * judged by every invariant; a failure fails the property with the line
 * check prints and a counterexample that replays (its file says
 * `service.moduleLoads: "per-process"`).
 */
async function probeModules(def: ServiceDefinition, details: fc.RunDetails<[GeneratedCase]>, o: ReplayableOptions, after: { how: 'shared' | 'carried'; asked: number } = { how: 'shared', asked: details.numRuns }): Promise<void> {
  const { module } = await fileModuleOf(def, o.module);
  if (!existsSync(resolve(module))) {
    throw new Error(`retrysim: app '${def.name}': its module is not known (${module} is no file), so its modules cannot be loaded once per simulated process, as separate processes load them; give serviceCases and replayable { module: new URL('./app.ts', import.meta.url) }`);
  }
  const co = caseOptions.get(def) ?? {};
  const set = shrinkSettings.get(def);
  const probe = await afterLastRun(() => runModuleProbe({
    module, once: def, runs: Math.min(after.asked, MODULE_PROBE_RUNS), seed: details.seed, keySource: co.keySource ?? 'tool_call', faults: co.faults ?? serviceFaults(def), explore: 'random',
    foundDir: o.foundDir ?? FOUND_DIR, foundBy: 'vitest', ...(set !== undefined ? { shrinkBudgetMs: set.budgetMs, clockMs: set.clockMs } : {}),
  }));
  const cx = probe.result.counterexample;
  if (probe.result.verdict !== 'fails' || cx === undefined) return;
  const line = moduleStateLine(def.name, after.how, probe);
  // The file must replay as its reader will run it: a fresh process, no environment variable (the file says how the modules load).
  const problem = cx.file === undefined ? undefined : freshReplayProblem(cx.file, [moduleFlag(def), module], { [PER_PROCESS_ENV]: '' });
  if (problem !== undefined) {
    rmSync(cx.file!, { force: true });
    throw new Error(`retrysim: ${line}

retrysim: ${serviceNotReproduced(def, problem)}`);
  }
  const stopped = stoppedText(cx);
  // Shared: the property passed on state the simulated processes shared; carried: it failed on state earlier runs left.
  const heading = after.how === 'shared'
    ? `Property passed ${details.numRuns} tests with the app's modules loaded once (seed ${details.seed}), and fails with one load per simulated process`
    : `Property failed with the app's modules loaded once (seed ${details.seed}) on a case that state kept from earlier runs decided (it did not reproduce in a fresh process), and fails with one load per simulated process`;
  throw new Error(`${heading}\n\n` +
    `retrysim: ${line}\n\n` +
    `retrysim: ${stopped.heading} (${sizeText(cx.size)}):\n` +
    `  ${cx.violations.map((v) => `${v.invariant} (${v.op}): ${v.detail}`).join('\n  ')}\n` +
    (cx.notMinimal.length > 0 ? `  not shown minimal: ${cx.notMinimal.join('; ')}\n` : '') + stopped.note +
    `  written to ${cx.file}\n  replay: ${cx.replay}`);
}

/** The run's one line: how far fast-check got, and the seed and path that rerun exactly this failure. */
function failedLine(details: fc.RunDetails<[GeneratedCase]>): string {
  return `Property failed after ${details.numRuns} tests, shrunk ${details.numShrinks} time(s) — seed ${details.seed}, path "${details.counterexamplePath ?? ''}" (pass { seed, path } to rerun it)`;
}

/**
 * Refuses what is not a retry client in one line (a module namespace, a
 * factory not called, a missing deadlineMs), as `check --client` does for
 * its module. Until 2026-12 `explainClient(mod)` of `import * as mod` ran
 * every case with no request at all and failed as "inconclusive … client
 * 'undefined'".
 */
function checkClient(client: unknown, what: string): asserts client is RetryClient {
  if (!isRetryClient(client)) throw new TypeError(`retrysim: ${what}: the client ${whyNotClient(client)}`);
}

/** Options of {@link clientCases}. */
export interface ClientCaseOptions {
  /** The service the client talks to: a built-in variant (default `key_atomic`, a correct idempotent endpoint)... */
  variant?: Variant;
  /** ...or a user's service (or an app descriptor, run as appService(app) is). */
  service?: ServiceDefinition | AppDescriptor;
  /**
   * With `service`: its module, as `retrysim replay` will be given it, or its
   * file URL (`new URL('./service.ts', import.meta.url)`). Recorded in the
   * counterexample file, so the replay command printed runs. Default: as
   * given to {@link serviceCases}, else the service's name (then the replay
   * needs `--service PATH`).
   */
  module?: string | URL;
  /** Which faults to generate. Default: lost answers (after a commit and on the way back), crashes, slow and paused requests, kill/restart, two instances, 429 with Retry-After. */
  faults?: readonly FaultKind[];
}

export { CLIENT_FAULTS } from './client/campaign.js';

const clientServices = new WeakMap<GeneratedCase, ServiceDefinition>();
/** What each client case was generated around (service or variant, faults): a client's per-process probe generates the same cases. */
const clientTargets = new WeakMap<GeneratedCase, { target: ClientTarget; faults?: readonly FaultKind[] }>();
/** The target of the cases each client last ran, for its per-process probe. */
const clientRanOn = new WeakMap<RetryClient, { target: ClientTarget; faults?: readonly FaultKind[] }>();

/**
 * The arbitrary of scenarios for a user's retry client: operations, faults,
 * timing and interleavings around a service (a correct one by default, so
 * what fails is the client). Pass it to `test.prop` with {@link runClientCase}.
 */
export function clientCases(o: ClientCaseOptions = {}): fc.Arbitrary<GeneratedCase> {
  checkOptions('clientCases', o, { variant: variantCheck, service: checkedWhereUsed, module: moduleCheck, faults: clientFaultsCheck });
  if (o.service !== undefined && o.variant !== undefined) throw new TypeError(`retrysim: clientCases: give service or variant, not both (variant '${o.variant}' and service '${o.service.name}')`);
  if (o.service !== undefined) {
    const def = asService(o.service);
    validateDefinition(def, def.name);
    noteCaller(def);
    const target = { service: def, serviceModule: moduleOf(def, o.module) };
    return new BoundedShrink(clientCaseArbitrary(target, o.faults).map((c) => (clientServices.set(c, def), clientTargets.set(c, { target, ...(o.faults ? { faults: o.faults } : {}) }), c)));
  }
  const target = { variant: o.variant ?? 'key_atomic' };
  return new BoundedShrink(clientCaseArbitrary(target, o.faults).map((c) => (clientTargets.set(c, { target, ...(o.faults ? { faults: o.faults } : {}) }), c)));
}

/**
 * Runs a user's retry client on one generated case, on virtual time:
 * `violations` names `progress` (a call that sent no request at all),
 * `stable-key` (two keys for one operation), `deadline`
 * (settled or sent past its deadline), `retry-after` (sent again before a
 * Retry-After had passed), `non-retryable` (sent again after a 400, 401,
 * 403, 404 or 422), `backoff` (retried 3 times or more, each at the instant
 * the failure came back), `exactly-one`, `id-exists` and `replay-equals-first`.
 */
export function runClientCase(client: RetryClient, c: GeneratedCase): Promise<ClientRun> {
  checkClient(client, 'runClientCase');
  const madeFor = serviceMade.get(c);
  if (madeFor !== undefined) throw new TypeError(`retrysim: runClientCase(${client.name}): this case was made by serviceCases(${madeFor}), for a service: a client's cases come from clientCases() (clientCases({ service }) runs the client against your service)`);
  const service = clientServices.get(c);
  ranBy(c, client);
  const t = clientTargets.get(c);
  if (t !== undefined) clientRanOn.set(client, t);
  return afterLastRun(async () => {
    const r = await runClientScenario(c.scenario, client, { choices: new ListChoice(c.choices), ...(service ? { service } : {}) });
    let a = clientAnswered.get(client);
    if (a === undefined) clientAnswered.set(client, (a = { runs: 0, succeeded: false }));
    a.runs++;
    a.succeeded ||= r.workers.some((w) => w.sent.some(answered2xx));
    a.first = preferRefusal(a.first, firstRefusal(r.workers));
    return r;
  });
}

/**
 * Whether each client had a request answered 2xx since its property's last
 * report: a client property that passes while none was (every request
 * refused: a wrong path, method or body) is inconclusive, as
 * `check --client` says (exit 4), not passed.
 */
const clientAnswered = new WeakMap<RetryClient, { runs: number; succeeded: boolean; first?: Refusal | undefined }>();

/** Options of {@link explainClient}. */
export interface ExplainClientOptions {
  /**
   * The client's module, as `retrysim replay` will be given it, or its file
   * URL (`new URL('./client.ts', import.meta.url)`). Recorded in the file;
   * without it the replay needs `--client PATH`. With it, a passing property
   * is checked again with the module loaded once per simulated client call,
   * as `check --client` does (its first min(numRuns, 50) cases): a key from a
   * counter kept at module level, which never repeats in one process, fails
   * there with check's line and a counterexample that replays.
   */
  module?: string | URL;
  /** Where the counterexample file goes. Default `.retrysim/found`. */
  foundDir?: string;
  /** As {@link ReplayableOptions.shrinkBudgetMs} (`check --client --shrink-budget`): default 60 s. */
  shrinkBudgetMs?: number;
  /** Measures elapsed ms for `shrinkBudgetMs`. Default: the machine's clock. */
  clockMs?: () => number;
}

/**
 * fast-check parameters whose reporter re-runs the shrunk case, writes it as
 * a scenario file that `retrysim replay` reproduces, and says in a few
 * lines what the client did: the scenario's size and faults, each request
 * with its key and outcome, the violations, and where the file is. Spread
 * your own parameters in: `{ ...explainClient(client), numRuns: 300 }`.
 */
export function explainClient(client: RetryClient, o: ExplainClientOptions = {}): fc.Parameters<[GeneratedCase]> {
  checkClient(client, 'explainClient');
  checkOptions(`explainClient(${client.name})`, o, { module: moduleCheck, foundDir: dirCheck, shrinkBudgetMs: checkedWhereUsed, clockMs: clockCheck });
  setShrinkSettings(client, shrinkSettingsOf(o, `explainClient(${client.name})`, Number.POSITIVE_INFINITY), `explainClient(${client.name})`);
  const named = o.module instanceof URL ? moduleKey(fileURLToPath(o.module)) : o.module;
  noteCaller(client);
  return {
    asyncReporter: async (details) => {
      await lastRun; // a run the property's time limit abandoned ends before anything here runs (see lastRun)
      const module = await clientModuleOf(client, named);
      const a = clientAnswered.get(client);
      clientAnswered.delete(client);
      if (!details.failed) {
        if (a !== undefined && a.runs > 0 && !a.succeeded) throw new Error(`retrysim: inconclusive, not passed: no request of the ${a.runs} runs of client '${client.name}' was answered 2xx${a.first !== undefined ? ` (the first: ${a.first.line})` : ''}, and a client that never succeeds keeps every check vacuously`);
        const ranOn = clientRanOn.get(client);
        if (module !== undefined && ranOn !== undefined && details.numRuns > 0) await probeClientModule(client, module, ranOn, details, o);
        return;
      }
      const c = details.counterexample?.[0];
      if (c === undefined) throw new Error(fc.defaultReportMessage(details) ?? 'property failed');
      const e = details.errorInstance;
      if (e instanceof ClientError || (e instanceof ServiceError && e.ofTheRun)) {
        // Not a verdict on the client (a request outside the simulation), or a run that stopped on its own course
        // (the client waits on nothing the run settles): check's line, and for a stop the shrunk run written for replay --trace.
        const svc = clientServices.get(c);
        const stop = e.ofTheRun ? await writeClientStoppedRun(client, c, new ListChoice(c.choices), { ...(module !== undefined ? { module } : {}), ...(svc ? { service: svc, serviceModule: (await fileModuleOf(svc)).module } : {}), seed: details.seed, foundDir: o.foundDir ?? CLIENT_FOUND_DIR, foundBy: 'vitest' }, { run: details.numRuns, shrinking: false }) : undefined;
        throw new Error(`retrysim: ${stop?.message ?? e.message} (retrysim check --client says the same, exit 2)${stop === undefined ? '' : `\n${stoppedRunLine(stop)}`}`);
      }
      // One counterexample: this case, explained below (fast-check's report would print it a second time, raw).
      const report = failedLine(details);
      const service = clientServices.get(c);
      let written: string;
      let r: ClientRun;
      let notReproduced: string | undefined;
      /** Why the written file did not reproduce in a fresh process, when it did not. */
      let problem: string | undefined;
      // The minimised case when minimising and writing worked; else fast-check's, as it failed.
      let shown = c.scenario;
      try {
        const timeLimit = limitOf(c, client);
        const cx = await recordClientCounterexample(client, c, { module, seed: details.seed, foundDir: o.foundDir ?? CLIENT_FOUND_DIR, ...(service ? { service, serviceModule: (await fileModuleOf(service)).module } : {}), ...(timeLimit !== undefined ? { timeLimit } : {}), foundBy: 'vitest' });
        // The file must replay as its reader will run it (a fresh process, no RETRYSIM_APP_PER_PROCESS: the file says how the client loads), as `check --client` holds it to.
        problem = cx.file === undefined || module === undefined ? undefined : freshReplayProblem(cx.file, ['--client', module], { [PER_PROCESS_ENV]: '' }, { field: 'sentHash', value: sentDigest(cx.run) });
        if (problem !== undefined) rmSync(cx.file!, { force: true });
        r = cx.run;
        shown = cx.scenario;
        const note = stoppedText(cx).note;
        written = `${cx.notMinimal.length > 0 ? `\n  not shown minimal: ${cx.notMinimal.join('; ')}` : ''}${note === '' ? '' : `\n${note.trimEnd()}`}\n  written to ${cx.file}\n  replay: ${cx.replay}` +
          (module === undefined && cx.file !== undefined ? `\n  (the client's module could not be found from where its run() is written; explainClient(client, { module: new URL('./client.ts', import.meta.url) }) names it, and the line then runs as printed)` : '');
      } catch (e) {
        r = await runClientCase(client, c);
        written = `\n  (could not write the counterexample: ${(e as Error).message})`;
      }
      if (problem !== undefined) {
        // As check --client: the first runs again with one load per simulated client process give the verdict
        // separate processes would (a failure there is the property's, with a file that replays).
        const ranOn = clientRanOn.get(client);
        const held = module !== undefined && ranOn !== undefined ? await probeClientModule(client, module, ranOn, details, o, 'carried') : undefined;
        notReproduced = notReproducedMessage(`client '${client.name}'`, problem, held === undefined ? CLIENT_STATE_HOME
          : `with one load per simulated client process (each call its own, as separate processes load it) its first ${held} runs hold, so what failed it is state its calls share (a breaker or a retry budget meant to span calls is each real process's own); for the verdict of separate processes on every run: ${PER_PROCESS_ENV}=1 retrysim check --client ${module}`);
      }
      if (notReproduced !== undefined) throw new Error(`${report}\n\nretrysim: ${notReproduced}`);
      const size = scenarioSize(shown, 0);
      const f = shown.faults;
      const t = shown.network.throttle;
      const faults = Object.entries({ loseResponseAfterCommit: f.loseResponseAfterCommit, crashMidRequest: f.crashMidRequest, slowMs: f.slowMs, loseResponses: shown.network.loseResponses })
        .filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).concat(f.pause ? [`pause ${f.pause.ms} ms at ${f.pause.atStep}`] : [], f.kill ? ['kill'] : [], t ? [`throttle ${t.count} × 429 Retry-After ${t.retryAfterS} s`] : [], shown.network.answer ? [`answer ${shown.network.answer.count} × ${shown.network.answer.status}`] : []);
      const lines = r.workers.flatMap((w) => w.sent.map((q) => `  ${w.name}  t=${q.atMs.toFixed(0)} ms  ${q.method} ${q.path}  key=${q.key ?? '(none)'}  → ${q.outcome ?? 'no answer'}`));
      throw new Error(`${report}\n\nretrysim: client '${client.name}' fails (${size.operations} op, ${count(size.workers, 'worker')}, ${count(size.instances, 'instance')}, faults: ${faults.join(', ') || 'none'}):\n` +
        `${lines.join('\n')}\n  ${r.violations.map((v) => `${v.invariant} — ${v.detail}`).join('\n  ')}${written}`);
    },
  };
}

/** Each client's module as found from where its run() is written (null: looked for, not found). */
const foundClientModules = new WeakMap<RetryClient, string | null>();

/**
 * The module a client's file names and its replay line loads: as named in
 * explainClient, else the user's file that defines its `run` and exports a
 * client of its name (src/service/defined-in.ts); undefined when neither.
 */
async function clientModuleOf(client: RetryClient, named: string | undefined): Promise<string | undefined> {
  if (named !== undefined) return named;
  if (!foundClientModules.has(client)) {
    const found = await moduleDefining([client.run], (mod) => Object.values(mod).some((v) => isRetryClient(v) && v.name === client.name), callers.get(client));
    foundClientModules.set(client, found ?? null);
  }
  return foundClientModules.get(client) ?? undefined;
}

/**
 * A passing client property ran the client with its module loaded once,
 * shared by every simulated call of every case, which no two client
 * processes share (`shared`); or a failing one's counterexample did not
 * reproduce in a fresh process (`carried`: state the module kept from
 * earlier runs decided it). As `check --client` does, its first
 * {@link MODULE_PROBE_RUNS} cases (the same seed, target and faults: the
 * same cases) run again with the module loaded once per simulated client
 * call; a failure fails the property with the line check prints and a
 * counterexample that replays (its file says `client.moduleLoads:
 * "per-process"`). Resolves to the runs that held, when they all did.
 */
async function probeClientModule(client: RetryClient, module: string, ranOn: { target: ClientTarget; faults?: readonly FaultKind[] }, details: fc.RunDetails<[GeneratedCase]>, o: ExplainClientOptions, how: 'shared' | 'carried' = 'shared'): Promise<number | undefined> {
  if (!existsSync(resolve(module))) {
    throw new Error(`retrysim: client '${client.name}': its module is not known (${module} is no file), so it cannot be loaded once per simulated client process, as separate processes load it; give explainClient { module: new URL('./client.ts', import.meta.url) }`);
  }
  // The runs asked, as check's probe takes them (a failing property's numRuns counts only the runs up to its failure).
  const sample = Math.min(how === 'shared' ? details.numRuns : details.runConfiguration.numRuns ?? 100, MODULE_PROBE_RUNS);
  const set = shrinkSettings.get(client);
  const p = await afterLastRun(() => runClientCampaign({
    client, module, runs: sample, seed: details.seed, ...ranOn.target, ...(ranOn.faults ? { faults: ranOn.faults } : {}), explore: 'random',
    foundDir: o.foundDir ?? CLIENT_FOUND_DIR, perProcess: freshClientLoader(module, client.name), ...(set !== undefined ? { shrinkBudgetMs: set.budgetMs, clockMs: set.clockMs } : {}),
  }));
  const cx = p.counterexample;
  if (p.verdict !== 'fails' || cx === undefined) return p.verdict === 'holds' ? p.runs : undefined;
  const line = clientModuleStateLine(client.name, how, p, sample);
  const service = ranOn.target.service !== undefined && ranOn.target.serviceModule !== undefined ? [moduleFlag(ranOn.target.service), ranOn.target.serviceModule] : [];
  // The file must replay as its reader will run it: a fresh process, no environment variable (the file says how the client loads).
  const problem = cx.file === undefined ? undefined : freshReplayProblem(cx.file, ['--client', module, ...service], { [PER_PROCESS_ENV]: '' }, { field: 'sentHash', value: sentDigest(cx.run) });
  if (problem !== undefined) {
    rmSync(cx.file!, { force: true });
    throw new Error(`retrysim: ${line}\n\nretrysim: ${notReproducedMessage(`client '${client.name}'`, problem, CLIENT_STATE_HOME)}`);
  }
  const stopped = stoppedText(cx);
  const heading = how === 'shared'
    ? `Property passed ${details.numRuns} tests with the client's module loaded once (seed ${details.seed}), and fails with one load per simulated client process`
    : `Property failed with the client's module loaded once (seed ${details.seed}) on a case that state kept from earlier runs decided, and fails with one load per simulated client process`;
  throw new Error(`${heading}\n\n` +
    `retrysim: ${line}\n\n` +
    `retrysim: ${stopped.heading} (${sizeText(cx.size, 'request')}):\n` +
    `  ${cx.violations.map((v) => `${v.invariant} (${v.op}): ${v.detail}`).join('\n  ')}\n` +
    (cx.notMinimal.length > 0 ? `  not shown minimal: ${cx.notMinimal.join('; ')}\n` : '') + stopped.note +
    `  written to ${cx.file}\n  replay: ${cx.replay}`);
}
