import { scheduleOf } from './record.js';
import { SCENARIO_FORMAT, type Scenario } from './schema.js';
import { parseScenario, ScenarioError } from './load.js';
import { matchesExpect, runScenario } from './run.js';
import type { ChoiceRecord, ChoiceSource } from '../sim/choice/source.js';

/** The format version 1 files carry: `chosen` indexed candidates in the order they became runnable. */
export const SCENARIO_FORMAT_V1 = 'retrysim.scenario/1';

/**
 * Follows a version-1 schedule by label: version 1 listed candidates in the
 * order they became runnable, version 2 lists the task that just ran first,
 * so the same decision has another index. The candidate *set* must be the
 * same, and the recorded label is chosen again, so the run is the same.
 */
class V1LabelChoice implements ChoiceSource {
  readonly name = 'migrate-v1';
  constructor(private readonly records: ReadonlyArray<Omit<ChoiceRecord, 'preempted'>>, private readonly source: string) {}
  choose(labels: readonly string[], index: number): number {
    const r = this.records[index];
    const fail = (why: string) => new ScenarioError(this.source, [{ path: `schedule[${index}]`, message: `cannot migrate: ${why}` }]);
    if (r === undefined) throw fail(`the run makes a decision among ${JSON.stringify(labels)} that the file does not record`);
    if ([...r.of].sort().join('\n') !== [...labels].sort().join('\n')) throw fail(`recorded candidates ${JSON.stringify(r.of)}, the run offers ${JSON.stringify(labels)}`);
    return labels.indexOf(r.of[r.chosen]!);
  }
}

/**
 * Migrates scenario JSON text to the current format. A version-1 file is
 * re-run following its recorded decisions by label, its schedule re-recorded
 * in version-2 terms (with `preempted`), and the result must still meet the
 * file's `expect` — a migration that changed the run is refused. Version-2
 * text comes back unchanged. Throws {@link ScenarioError} naming the problem.
 */
export async function migrateScenario(text: string, source: string): Promise<{ scenario: Scenario; migrated: boolean }> {
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new ScenarioError(source, [{ path: '', message: `not JSON: ${(e as Error).message}` }]);
  }
  if (raw === null || typeof raw !== 'object' || raw.format !== SCENARIO_FORMAT_V1) {
    return { scenario: parseScenario(text, source), migrated: false };
  }
  const old = Array.isArray(raw.schedule) ? (raw.schedule as Array<Omit<ChoiceRecord, 'preempted'>>) : [];
  const base = parseScenario(JSON.stringify({ ...raw, format: SCENARIO_FORMAT, schedule: [] }), source);
  const run = await runScenario(base, { choices: new V1LabelChoice(old, source) });
  if (run.result.choices.length !== old.length) {
    throw new ScenarioError(source, [{ path: 'schedule', message: `cannot migrate: the file records ${old.length} decisions, the run made ${run.result.choices.length}` }]);
  }
  const scenario: Scenario = { ...base, schedule: scheduleOf(run.result.choices) };
  const m = matchesExpect(scenario, run);
  if (!m.ok) throw new ScenarioError(source, [{ path: 'expect', message: `cannot migrate: the re-run no longer meets expect (${m.problems.join('; ')})` }]);
  return { scenario, migrated: true };
}
