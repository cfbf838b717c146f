import type { GeneratedCase } from '../scenario/arbitraries.js';
import { shellArg } from '../report/shell.js';
import { scheduleOf } from '../scenario/record.js';
import type { Scenario } from '../scenario/schema.js';
import type { MinimiseOptions } from '../campaign/minimise.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import type { ServiceDefinition } from '../service/definition.js';
import { minimiseStop, serviceInFile, writeStoppedScenario, type StoppedRun } from '../service/stopped-run.js';
import { moduleFlag } from '../app/define.js';
import { runClientScenario, type RetryClient } from './run.js';

/**
 * Writes the run that stopped a client campaign — the client waits on
 * nothing the run can settle (a promise nobody resolves), the run never
 * ends, or the service it calls never answers — as a scenario file whose
 * `replay --trace` shows the run up to the stop, as for a service
 * (src/service/stopped-run.ts): the case fast-check shrank (it shrinks a
 * throw as a failure), then minimised as a counterexample is, keeping the
 * kind of stop. Nothing is written when the case does not stop again.
 */
export async function writeClientStoppedRun(client: RetryClient, c: GeneratedCase, choices: ChoiceSource, o: { module?: string; service?: ServiceDefinition; serviceModule?: string; perProcess?: () => Promise<RetryClient>; seed: number; foundDir?: string; foundBy?: 'check' | 'vitest'; timeLimit?: MinimiseOptions['timeLimit'] }, stopped: Omit<StoppedRun, 'file' | 'replay'>): Promise<StoppedRun> {
  const m = await minimiseStop(c.scenario, choices, (s, ch) => runClientScenario(s, client, { choices: ch, ...(o.service ? { service: o.service } : {}), ...(o.perProcess ? { perProcess: o.perProcess } : {}) }), { userClient: true, ...(o.timeLimit !== undefined ? { timeLimit: o.timeLimit } : {}) });
  if (m === undefined || o.foundDir === undefined) return stopped;
  const scenario: Scenario = {
    ...m.scenario,
    name: `${client.name}: the run that stopped the campaign`,
    description: `Run ${stopped.run} of ${o.foundBy === 'vitest' ? 'a vitest property (retrysim\'s vitest helper, ' : `retrysim check --client ${o.module ?? client.name} (`}seed ${o.seed})${stopped.shrinking ? ', tried while shrinking its failure,' : ''} stopped the campaign; minimised as a counterexample is${m.minimal ? '' : ` (not known minimal: ${m.notMinimal.join('; ')})`}: ${m.error.message}. Not a verdict: replayed with --trace it shows the run up to the stop.`,
    ...(o.service !== undefined ? { service: serviceInFile(m.scenario.service, o.service, o.serviceModule) } : {}),
    client: { ...m.scenario.client, ...(o.module !== undefined ? { module: o.module } : {}), name: client.name, ...(o.perProcess !== undefined && o.module !== undefined ? { moduleLoads: 'per-process' as const } : {}) },
    schedule: scheduleOf(m.records),
    expect: { violations: [] },
  };
  const file = writeStoppedScenario(o.foundDir, client.name, scenario);
  const service = o.service !== undefined && o.serviceModule !== undefined ? ` ${moduleFlag(o.service)} ${shellArg(o.serviceModule)}` : '';
  return { ...stopped, file, replay: `retrysim replay --client ${o.module !== undefined ? shellArg(o.module) : '<your client module>'}${service} ${shellArg(file)} --trace`, message: m.error.message };
}
