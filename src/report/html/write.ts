import { writeFileSync } from 'node:fs';
import type { RunOptions, ScenarioRun } from '../../scenario/run.js';
import type { Scenario } from '../../scenario/schema.js';
import { observeScenario, type StepperSource } from './stepper-data.js';
import { stepperPage } from './stepper.js';

/**
 * Runs a scenario observed, writes its stepper page to `out` and returns the
 * run (so the command prints the very run the page shows). The page is
 * written only after the run succeeded: a divergent replay writes nothing.
 */
export async function writeStepperPage(out: string, s: Scenario, source: StepperSource, opts: RunOptions = {}): Promise<ScenarioRun> {
  const { data, run } = await observeScenario(s, source, opts);
  writeFileSync(out, await stepperPage(data));
  return run;
}
