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
import type { FaultKind, GeneratedCase } from './scenario/arbitraries.js';
import type { KeySource } from './harness/keys.js';
import { runScenario, type ScenarioRun } from './scenario/run.js';
import { ListChoice } from './sim/choice/list.js';
import type { ServiceDefinition } from './service/definition.js';
import { minimiseAndWrite, serviceCaseArbitrary } from './service/campaign.js';
import { fileURLToPath } from 'node:url';
import { moduleKey, registerService } from './service/registry.js';
import { validateDefinition } from './service/validate.js';

export { test, it, fc } from '@fast-check/vitest';
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

const modules = new WeakMap<ServiceDefinition, string>();

function moduleOf(def: ServiceDefinition, module?: string | URL): string {
  const m = module instanceof URL ? moduleKey(fileURLToPath(module)) : module ?? modules.get(def) ?? def.name;
  modules.set(def, m);
  registerService(m, def);
  return m;
}

/**
 * The arbitrary of scenarios for a service: pass it to `test.prop` or
 * `fc.asyncProperty`. Checks the definition first (a clear message, not a
 * stack trace, when it is malformed).
 */
export function serviceCases(def: ServiceDefinition, o: ServiceCaseOptions = {}): fc.Arbitrary<GeneratedCase> {
  validateDefinition(def, String(o.module ?? 'service'));
  return serviceCaseArbitrary(def, moduleOf(def, o.module), o.keySource, o.faults);
}

/** Runs one generated case against the service; `violations` is empty when every invariant held. */
export function runServiceCase(def: ServiceDefinition, c: GeneratedCase): Promise<ScenarioRun> {
  moduleOf(def);
  return runScenario(c.scenario, { choices: new ListChoice(c.choices), service: def });
}

/** Options of {@link replayable}. */
export interface ReplayableOptions {
  /** The service's module for the replay command. Default: as given to {@link serviceCases}. */
  module?: string | URL;
  /** Where the minimised counterexample is written. Default `scenarios/found`. */
  foundDir?: string;
}

/**
 * fast-check parameters whose reporter turns the shrunk failure into a
 * minimised, replayable scenario file and names it in the failure message.
 * Spread your own parameters in: `{ ...replayable(service), numRuns: 500 }`.
 */
export function replayable(def: ServiceDefinition, o: ReplayableOptions = {}): fc.Parameters<[GeneratedCase]> {
  return {
    asyncReporter: async (details) => {
      if (!details.failed) return;
      const report = fc.defaultReportMessage(details) ?? 'property failed';
      const c = details.counterexample?.[0];
      if (c === undefined) throw new Error(report);
      const module = moduleOf(def, o.module);
      let where: string;
      try {
        const cx = await minimiseAndWrite(def, module, c, details.seed, o.foundDir ?? 'scenarios/found');
        const s = cx.size;
        where = `minimised counterexample (${s.operations} op, ${s.workers} worker(s), ${s.faults} fault(s), ${s.preemptions} preemption(s)): ` +
          `${cx.violations.map((v) => `${v.invariant} — ${v.detail}`).join('; ')}\n  written to ${cx.file}\n  replay: ${cx.replay}`;
      } catch (e) {
        where = `(could not minimise the counterexample: ${(e as Error).message})`;
      }
      throw new Error(`${report}\n\nretrysim: ${where}`);
    },
  };
}
