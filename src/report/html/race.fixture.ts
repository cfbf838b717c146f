import { SCENARIO_FORMAT, scenarioSchema, type Scenario } from '../../scenario/schema.js';
import { recordScenario } from '../../scenario/record.js';
import { runScenario } from '../../scenario/run.js';
import { printScenario } from '../../scenario/load.js';
import { ListChoice } from '../../sim/choice/list.js';

/**
 * For the stepper's tests: the key_split race, built by hand. Two workers
 * send the same operation (same tool call, same key) at once; the schedule
 * runs everything without preemption except once — right after the first
 * request's `check`, the other request runs its own `check`. Both pass the
 * lookup before either registers the key, so both insert a report.
 */
export async function keySplitRace(): Promise<{ scenario: Scenario; text: string }> {
  const base = scenarioSchema.parse({
    format: SCENARIO_FORMAT,
    name: 'key_split race: two requests pass the key check before either registers it',
    description: 'Two workers run one operation at once with the same tool_call key. One preemption, right after the first request looked the key up, lets the second look it up too: both see no key, both insert a report.',
    seed: 1,
    service: { variant: 'key_split' },
    client: { keySource: 'tool_call' },
    operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay button does nothing', workers: 2, staggerMs: 0 }],
    expect: {},
  });
  const { scenario, run } = await recordScenario(base, await preemptAfterFirstLookup(base));
  const recorded: Scenario = { ...scenario, expect: { reports: run.reports, violations: [...new Set(run.violations.map((v) => v.invariant))] } };
  return { scenario: recorded, text: printScenario(recorded) };
}

/**
 * A schedule with one preemption: run without preemption until the first
 * request has looked its key up (check or claim) and is about to go on to
 * `process`; there, switch to the other candidate.
 */
export async function preemptAfterFirstLookup(s: Scenario): Promise<ListChoice> {
  const calm = await runScenario(s, { choices: new ListChoice([]) });
  const at = calm.result.choices.findIndex((c) => c.of[0]!.endsWith(':process'));
  if (at < 0) throw new Error(`scenario '${s.name}': no decision before a process step`);
  return new ListChoice(Array.from({ length: at + 1 }, (_, i) => (i === at ? 1 : 0)));
}
