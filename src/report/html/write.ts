import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { RunOptions, ScenarioRun } from '../../scenario/run.js';
import type { Scenario } from '../../scenario/schema.js';
import { observeRun, observeScenario, StoppedRunPage, type StepperSource } from './stepper-data.js';
import type { StepperData } from './stepper-types.js';
import { runClientScenario, type ClientRun, type ClientRunOptions, type RetryClient } from '../../client/run.js';
import { stepperPage } from './stepper.js';

/**
 * Runs a scenario observed, writes its stepper page to `out` and returns the
 * run (so the command prints the very run the page shows). The page is
 * written only after the run ended: a divergent replay writes nothing; a
 * run that stopped (a request never answered) gets the page of its steps up
 * to the stop, and its error is rethrown ({@link stoppedPages}).
 */
export async function writeStepperPage(out: string, s: Scenario, source: StepperSource, opts: RunOptions = {}): Promise<ScenarioRun> {
  const { data, run } = await stoppedPageWritten(out, () => observeScenario(s, source, opts));
  await writePage(out, data);
  return run;
}

async function writePage(out: string, data: StepperData): Promise<void> {
  const page = await stepperPage(data);
  mkdirSync(dirname(out), { recursive: true }); // replay --html DIR/ names a folder that may not exist yet
  writeFileSync(out, page);
}

/**
 * The pages written for runs that stopped (a request never answered): the
 * stop's error → the page. The stop is still the command's outcome (exit 2,
 * its one line); the caller says the page was written too.
 */
export const stoppedPages = new WeakMap<Error, string>();

/** Runs `observe`; a run that stopped gets its page up to the stop written to `out`, and its error rethrown. */
async function stoppedPageWritten<T>(out: string, observe: () => Promise<T>): Promise<T> {
  try {
    return await observe();
  } catch (e) {
    if (!(e instanceof StoppedRunPage)) throw e;
    await writePage(out, e.data);
    stoppedPages.set(e.error, out);
    throw e.error;
  }
}

/**
 * The same for a user's retry client: the client runs observed on virtual
 * time against the scenario's service (`opts`, as `runClientScenario` takes
 * them), and the page draws that run — its requests, its waits, the
 * answers, the faults and the client check it breaks. Written only after
 * the run succeeded.
 */
export async function writeClientStepperPage(out: string, s: Scenario, client: RetryClient, source: StepperSource, opts: ClientRunOptions = {}): Promise<ClientRun> {
  const { data, run } = await stoppedPageWritten(out, () => observeRun(s, source, opts.service, (observe) => runClientScenario(s, client, { ...opts, observe }), { name: client.name, workers: (r) => r.workers, ...(opts.perProcess !== undefined ? { moduleLoads: 'per-process' as const } : {}) }));
  await writePage(out, data);
  return run;
}
