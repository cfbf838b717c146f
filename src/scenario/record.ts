import { RandomChoice } from '../sim/choice/random.js';
import type { ChoiceRecord, ChoiceSource } from '../sim/choice/source.js';
import { runScenario, type ScenarioRun } from './run.js';
import type { Scenario } from './schema.js';

/**
 * Runs a scenario with the given choice source (default: seeded random) and
 * returns the scenario with the schedule that was actually taken written
 * into it, so the file replays that exact interleaving.
 */
export async function recordScenario(s: Scenario, choices?: ChoiceSource): Promise<{ scenario: Scenario; run: ScenarioRun }> {
  const run = await runScenario(s, { choices: choices ?? new RandomChoice(s.seed) });
  return { scenario: { ...s, schedule: scheduleOf(run.result.choices) }, run };
}

/** A run's decisions as a scenario file's schedule (copied, so the file does not alias the kernel's log). */
export function scheduleOf(choices: readonly ChoiceRecord[]): Scenario['schedule'] {
  return choices.map((c) => ({ t: c.t, chosen: c.chosen, of: [...c.of], preempted: c.preempted }));
}
