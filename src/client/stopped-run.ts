import type { GeneratedCase } from '../scenario/arbitraries.js';
import { scheduleOf } from '../scenario/record.js';
import type { Scenario } from '../scenario/schema.js';
import { RecordingChoice } from '../sim/choice/recording.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import type { ServiceDefinition } from '../service/definition.js';
import { ServiceError } from '../service/errors.js';
import { writeStoppedScenario, type StoppedRun } from '../service/stopped-run.js';
import { moduleFlag, moduleLoadsOf } from '../app/define.js';
import { ClientError } from './load.js';
import { runClientScenario, type RetryClient } from './run.js';

/**
 * Writes the run that stopped a client campaign — the client waits on
 * nothing the run can settle (a promise nobody resolves), the run never
 * ends, or the service it calls never answers — as a scenario file whose
 * `replay --trace` shows the run up to the stop, as for a service
 * (src/service/stopped-run.ts). fast-check shrinks a case that throws like
 * one that fails, so the case written is the smallest it found stopping.
 * Run once more with its decisions recorded; nothing is written when it
 * does not stop again.
 */
export async function writeClientStoppedRun(client: RetryClient, c: GeneratedCase, choices: ChoiceSource, o: { module?: string; service?: ServiceDefinition; serviceModule?: string; perProcess?: () => Promise<RetryClient>; seed: number; foundDir?: string; foundBy?: 'check' | 'vitest' }, stopped: Omit<StoppedRun, 'file' | 'replay'>): Promise<StoppedRun> {
  const rec = new RecordingChoice(choices);
  let error: ClientError | ServiceError;
  try {
    await runClientScenario(c.scenario, client, { choices: rec, ...(o.service ? { service: o.service } : {}), ...(o.perProcess ? { perProcess: o.perProcess } : {}) });
    return stopped;
  } catch (e) {
    if (!((e instanceof ClientError || e instanceof ServiceError) && e.ofTheRun)) return stopped;
    error = e;
  }
  if (o.foundDir === undefined) return stopped;
  const scenario: Scenario = {
    ...c.scenario,
    name: `${client.name}: the run that stopped the campaign`,
    description: `Run ${stopped.run} of ${o.foundBy === 'vitest' ? 'a vitest property (retrysim\'s vitest helper, ' : `retrysim check --client ${o.module ?? client.name} (`}seed ${o.seed})${stopped.shrinking ? ', tried while shrinking its failure,' : ''} stopped the campaign (the smallest such case fast-check found): ${error.message}. Not a verdict: replayed with --trace it shows the run up to the stop.`,
    ...(o.service !== undefined && moduleLoadsOf(o.service) === 'per-process' ? { service: { ...c.scenario.service, moduleLoads: 'per-process' as const } } : {}),
    client: { ...c.scenario.client, ...(o.module !== undefined ? { module: o.module } : {}), name: client.name, ...(o.perProcess !== undefined && o.module !== undefined ? { moduleLoads: 'per-process' as const } : {}) },
    schedule: scheduleOf(rec.records),
    expect: { violations: [] },
  };
  const file = writeStoppedScenario(o.foundDir, client.name, scenario);
  const service = o.service !== undefined && o.serviceModule !== undefined ? ` ${moduleFlag(o.service)} ${o.serviceModule}` : '';
  return { ...stopped, file, replay: `retrysim replay --client ${o.module ?? '<your client module>'}${service} ${file} --trace` };
}
