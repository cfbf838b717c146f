import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RunOptions, ScenarioRun } from '../../scenario/run.js';
import type { Scenario } from '../../scenario/schema.js';
import { observeRun, observeScenario, type StepperSource } from './stepper-data.js';
import { runClientScenario, type ClientRun, type ClientRunOptions, type RetryClient } from '../../client/run.js';
import { stepperPage } from './stepper.js';

/**
 * Runs a scenario observed, writes its stepper page to `out` and returns the
 * run (so the command prints the very run the page shows). The page is
 * written only after the run succeeded: a divergent replay writes nothing.
 */
export async function writeStepperPage(out: string, s: Scenario, source: StepperSource, opts: RunOptions = {}): Promise<ScenarioRun> {
  const { data, run } = await observeScenario(s, source, opts);
  const page = await stepperPage(data);
  mkdirSync(dirname(out), { recursive: true }); // replay --html DIR/ names a folder that may not exist yet
  writeFileSync(out, page);
  return run;
}

/**
 * The same for a user's retry client: the client runs observed on virtual
 * time against the scenario's service (`opts`, as `runClientScenario` takes
 * them), and the page draws that run — its requests, its waits, the
 * answers, the faults and the client check it breaks. Written only after
 * the run succeeded.
 */
export async function writeClientStepperPage(out: string, s: Scenario, client: RetryClient, source: StepperSource, opts: ClientRunOptions = {}): Promise<ClientRun> {
  const { data, run } = await observeRun(s, source, opts.service, (observe) => runClientScenario(s, client, { ...opts, observe }), { name: client.name, workers: (r) => r.workers, ...(opts.perProcess !== undefined ? { moduleLoads: 'per-process' as const } : {}) });
  const page = await stepperPage(data);
  mkdirSync(dirname(out), { recursive: true }); // replay --html DIR/ names a folder that may not exist yet
  writeFileSync(out, page);
  return run;
}
