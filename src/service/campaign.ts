import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scenarioArbitrary, scenarioSize, type FaultKind, type GeneratedCase } from '../scenario/arbitraries.js';
import { runScenario, type ScenarioRun } from '../scenario/run.js';
import { printScenario } from '../scenario/load.js';
import { scheduleOf } from '../scenario/record.js';
import type { Scenario } from '../scenario/schema.js';
import { ListChoice } from '../sim/choice/list.js';
import { hashJson } from '../sim/canonical.js';
import { minimiseCounterexample } from '../campaign/minimise.js';
import { SHRINK_RUNS_MAX } from '../campaign/run.js';
import type { KeySource } from '../harness/keys.js';
import type { Violation } from '../checkers/invariants.js';
import type { ServiceDefinition } from './definition.js';
import { ServiceError } from './errors.js';
import { registerService } from './registry.js';

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
  return (def.crashPoints ?? []).length > 0 ? all : all.filter((f) => f !== 'crash');
}

/** Options of {@link runServiceCampaign}. */
export interface ServiceCampaignOptions {
  def: ServiceDefinition;
  /** The module path the definition was loaded from (recorded in counterexample files). Default: the service's name. */
  module?: string;
  /** Default `tool_call`. */
  keySource?: KeySource;
  /** Default {@link serviceFaults}. */
  faults?: readonly FaultKind[];
  runs: number;
  seed: number;
  /** Where the shrunk counterexample is written; undefined: not written. */
  foundDir?: string;
  onProgress?: (done: number) => void;
  /** Measures elapsed ms (injected: simulated code never reads real time). */
  clockMs?: () => number;
}

/** What a campaign on a user service found. */
export interface ServiceCampaignResult {
  service: string;
  module: string;
  keySource: KeySource;
  seed: number;
  runs: number;
  verdict: 'holds' | 'refuted';
  firstFailureMs?: number;
  /** The minimised counterexample. */
  counterexample?: {
    scenario: Scenario;
    file?: string;
    violations: Violation[];
    size: ReturnType<typeof scenarioSize>;
    /** Whether the schedule search showed no schedule with fewer preemptions fails. */
    preemptionsMinimal: boolean;
    removed: string[];
    replay: string;
  };
}

/** The generator of scenarios (faults, timing, interleavings) for a user service. */
export function serviceCaseArbitrary(def: ServiceDefinition, module: string, keySource: KeySource = 'tool_call', faults: readonly FaultKind[] = serviceFaults(def)): fc.Arbitrary<GeneratedCase> {
  return scenarioArbitrary({ variant: 'naive', service: { module, steps: def.steps, crashPoints: def.crashPoints ?? [] }, keySource, faults });
}

/**
 * Runs the standard campaign against a user service: fast-check generates
 * scenarios and schedules, each runs on the kernel through the service API,
 * the effects are judged; a failure is shrunk, minimised (fewest
 * preemptions, then no removable operation, worker, fault, instance or
 * attempt) and written as a scenario file that `retrysim replay --service`
 * replays. A problem in the service itself stops the campaign with its
 * {@link ServiceError}.
 */
export async function runServiceCampaign(o: ServiceCampaignOptions): Promise<ServiceCampaignResult> {
  const module = o.module ?? o.def.name;
  registerService(module, o.def);
  const keySource = o.keySource ?? 'tool_call';
  const clock = o.clockMs ?? (() => 0);
  const t0 = clock();
  const fails = (r: ScenarioRun) => r.violations.length > 0;
  let firstFailureMs: number | undefined;
  let serviceError: ServiceError | undefined;
  let done = 0;
  let shrinkRuns = 0;
  const prop = fc.asyncProperty(serviceCaseArbitrary(o.def, module, keySource, o.faults), async (c) => {
    if (serviceError !== undefined || (firstFailureMs !== undefined && ++shrinkRuns > SHRINK_RUNS_MAX)) return true;
    let r: ScenarioRun;
    try {
      r = await runScenario(c.scenario, { choices: new ListChoice(c.choices), service: o.def });
    } catch (e) {
      if (e instanceof ServiceError) {
        serviceError = e; // a broken service: no point shrinking a verdict about it
        return true;
      }
      throw e;
    }
    if (firstFailureMs === undefined) o.onProgress?.(++done);
    if (!fails(r)) return true;
    firstFailureMs ??= clock() - t0;
    return false;
  });
  const details = await fc.check(prop, { numRuns: o.runs, seed: o.seed });
  if (serviceError !== undefined) throw serviceError;
  const base = { service: o.def.name, module, keySource, seed: o.seed, runs: details.numRuns };
  if (!details.failed) return { ...base, verdict: 'holds' };
  if (details.errorInstance && !(details.errorInstance instanceof Error && /Property failed by returning false/.test(details.errorInstance.message))) {
    throw details.errorInstance;
  }
  const [c] = details.counterexample as [GeneratedCase];
  const counterexample = await minimiseAndWrite(o.def, module, c, o.seed, o.foundDir);
  return { ...base, verdict: 'refuted', firstFailureMs, counterexample };
}

/**
 * Minimises a failing case and writes it with its schedule and `expect`
 * (the effects and the violated invariants), named by service, invariant
 * and content hash.
 */
export async function minimiseAndWrite(def: ServiceDefinition, module: string, c: GeneratedCase, seed: number, foundDir?: string): Promise<NonNullable<ServiceCampaignResult['counterexample']>> {
  registerService(module, def);
  const first = await runScenario(c.scenario, { choices: new ListChoice(c.choices), service: def });
  const target = first.violations[0]?.invariant;
  const isHit = (r: ScenarioRun) => r.violations.some((v) => v.invariant === target);
  const m = await minimiseCounterexample(c.scenario, first.result.choices.map((x) => x.chosen), { isHit });
  const run = await runScenario(m.scenario, { choices: new ListChoice(m.choices), service: def });
  const invariants = [...new Set(run.violations.map((v) => v.invariant))].sort();
  const scenario: Scenario = {
    ...m.scenario,
    name: `${def.name}: shrunk counterexample`,
    description: `Found by retrysim check --service ${module} (seed ${seed}): ${run.violations.map((v) => `${v.invariant} — ${v.detail}`).join('; ')}.`,
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
    replay: file !== undefined ? `retrysim replay --service ${module} ${file} --trace` : '(not written)',
  };
}
