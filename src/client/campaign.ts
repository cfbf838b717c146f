import fc from 'fast-check';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scenarioArbitrary, scenarioSize, type FaultKind, type GeneratedCase } from '../scenario/arbitraries.js';
import { printScenario } from '../scenario/load.js';
import { scheduleOf } from '../scenario/record.js';
import type { Scenario } from '../scenario/schema.js';
import { ListChoice } from '../sim/choice/list.js';
import { hashJson } from '../sim/canonical.js';
import type { BuiltinName as Variant } from '../tracker/builtin.js';
import type { Violation } from '../checkers/invariants.js';
import type { ServiceDefinition } from '../service/definition.js';
import { serviceCaseArbitrary } from '../service/campaign.js';
import { registerService } from '../service/registry.js';
import { runClientScenario, type ClientRun, type RetryClient } from './run.js';

/** The faults a retry client is run under by default. */
export const CLIENT_FAULTS: readonly FaultKind[] = ['loseResponse', 'loseAllAnswers', 'crash', 'slow', 'pause', 'kill', 'instances', 'throttle', 'answer'];

/** Where a client counterexample goes unless told otherwise (git-ignored, as for `retrysim check`). */
export const CLIENT_FOUND_DIR = '.retrysim/found';

/** What a client runs against: a built-in variant (default `key_atomic`, a correct endpoint, so what fails is the client) or a user's service. */
export interface ClientTarget {
  variant?: Variant;
  service?: ServiceDefinition;
  /** The service's module path (recorded in files so the replay loads it). Default: the service's name. */
  serviceModule?: string;
}

/** The arbitrary of scenarios for a retry client (at most one operation on a built-in variant). */
export function clientCaseArbitrary(t: ClientTarget = {}, faults: readonly FaultKind[] = CLIENT_FAULTS): fc.Arbitrary<GeneratedCase> {
  if (t.service !== undefined) {
    const module = t.serviceModule ?? t.service.name;
    registerService(module, t.service);
    return serviceCaseArbitrary(t.service, module, 'tool_call', faults);
  }
  return scenarioArbitrary({ variant: t.variant ?? 'key_atomic', keySource: 'tool_call', faults, opsMax: 1 });
}

/** A client counterexample, written (or not) as a replayable scenario file. */
export interface ClientCounterexample {
  scenario: Scenario;
  run: ClientRun;
  file?: string;
  violations: Violation[];
  size: ReturnType<typeof scenarioSize>;
  /** The command that replays the file. */
  replay: string;
}

/**
 * Records a failing case of a retry client as a scenario file: the case's
 * scenario with the client's module and name, the schedule the run took and
 * `expect` (effects per operation, the broken invariants). The file is
 * replayed strictly once before it is written, so what is written is known
 * to reproduce. `module` undefined: the file names the client only, and
 * `retrysim replay --client PATH` supplies the module.
 */
export async function recordClientCounterexample(client: RetryClient, c: GeneratedCase, o: { module?: string; service?: ServiceDefinition; seed?: number; foundDir?: string } = {}): Promise<ClientCounterexample> {
  const opts = o.service ? { service: o.service } : {};
  const first = await runClientScenario(c.scenario, client, { choices: new ListChoice(c.choices), ...opts });
  const invariants = [...new Set(first.violations.map((v) => v.invariant))].sort();
  const scenario: Scenario = {
    ...c.scenario,
    name: `${client.name}: shrunk counterexample`,
    description: `Found for retry client '${client.name}'${o.seed !== undefined ? ` (seed ${o.seed})` : ''}: ${first.violations.map((v) => `${v.invariant} — ${v.detail}`).join('; ')}.`,
    client: { ...c.scenario.client, ...(o.module !== undefined ? { module: o.module } : {}), name: client.name },
    schedule: scheduleOf(first.result.choices),
    expect: { reports: first.reports, violations: invariants },
  };
  // The file must reproduce by itself: replay it exactly as `retrysim replay` will.
  const again = await runClientScenario(scenario, client, { strictReplay: true, ...opts });
  const got = [...new Set(again.violations.map((v) => v.invariant))].sort();
  if (got.join() !== invariants.join()) throw new Error(`the counterexample of client '${client.name}' did not reproduce on replay (first [${invariants.join(', ')}], then [${got.join(', ')}]): the client is not deterministic on virtual time (does it read real time or I/O?)`);
  const size = scenarioSize(scenario, first.workers.reduce((n, w) => n + w.sent.length, 0));
  let file: string | undefined;
  if (o.foundDir !== undefined) {
    mkdirSync(o.foundDir, { recursive: true });
    const safe = client.name.replace(/[^A-Za-z0-9_-]/g, '_');
    file = join(o.foundDir, `${safe}-${invariants[0] ?? 'violation'}-${hashJson(scenario).slice(0, 8)}.json`);
    writeFileSync(file, printScenario(scenario));
  }
  const replay = file === undefined ? '(not written)' : `retrysim replay ${o.module === undefined ? '--client <your client module> ' : ''}${file} --trace`;
  return { scenario, run: first, ...(file !== undefined ? { file } : {}), violations: first.violations, size, replay };
}

/** Options of {@link runClientCampaign}. */
export interface ClientCampaignOptions extends ClientTarget {
  client: RetryClient;
  /** The client's module path (recorded in the file). */
  module?: string;
  faults?: readonly FaultKind[];
  runs: number;
  seed: number;
  /** Where the counterexample goes; undefined: not written. */
  foundDir?: string;
}

/** What a client campaign found. */
export interface ClientCampaignResult {
  client: string;
  seed: number;
  runs: number;
  verdict: 'holds' | 'refuted';
  counterexample?: ClientCounterexample;
}

/**
 * The property campaign on a retry client: fast-check generates scenarios
 * (operations, faults, timing, interleavings) around the target service,
 * the client runs each on virtual time, and the first failure is shrunk
 * and recorded as a replayable file.
 */
export async function runClientCampaign(o: ClientCampaignOptions): Promise<ClientCampaignResult> {
  const service = o.service;
  if (service !== undefined) registerService(o.serviceModule ?? service.name, service);
  const prop = fc.asyncProperty(clientCaseArbitrary(o, o.faults), async (c) => {
    const r = await runClientScenario(c.scenario, o.client, { choices: new ListChoice(c.choices), ...(service ? { service } : {}) });
    return r.violations.length === 0;
  });
  const details = await fc.check(prop, { numRuns: o.runs, seed: o.seed });
  const base = { client: o.client.name, seed: o.seed, runs: details.numRuns };
  if (!details.failed) return { ...base, verdict: 'holds' };
  if (details.errorInstance && !(details.errorInstance instanceof Error && /Property failed by returning false/.test(details.errorInstance.message))) throw details.errorInstance;
  const [c] = details.counterexample as [GeneratedCase];
  const counterexample = await recordClientCounterexample(o.client, c, { module: o.module, seed: o.seed, foundDir: o.foundDir, ...(service ? { service } : {}) });
  return { ...base, verdict: 'refuted', counterexample };
}
