import { KEY_SOURCES, type KeySource } from '../harness/keys.js';
import { restartBetweenRetries, serviceColumns } from '../real/service-conformance.js';
import { runScenario, type ScenarioRun } from '../scenario/run.js';
import { scheduleOf } from '../scenario/record.js';
import type { Scenario } from '../scenario/schema.js';
import { ListChoice } from '../sim/choice/list.js';
import type { ServiceDefinition } from './definition.js';
import { registerService } from './registry.js';
import { Reached } from './reached.js';
import { noteRun, type Answers } from './campaign.js';

/**
 * The key sources whose cells are judged (no second effect, no invariant
 * broken): a key that stays the same across a
 * call's retries (the tool call's, or one made from the business content).
 * With no key, or a new key per attempt, a retry is a new operation to any
 * service — those columns show what the service does then, and judge nothing.
 */
export const JUDGED_KEY_SOURCES: readonly KeySource[] = ['tool_call', 'business'];

/** One cell of `retrysim matrix --service PATH`: one of conformance's scenarios (a line) × a key source (a column). */
export interface ServiceMatrixCell {
  keySource: KeySource;
  column: string;
  /** The cell's scenario as run, its kill's restart placed and its schedule recorded: a file of it replays. */
  scenario: Scenario;
  /** Effects the operation left at the end (the service's `effects.of`). */
  effects: number;
  /** Invariants the run broke, sorted. */
  violations: string[];
  /** A stable key: the goal is no second effect and no invariant broken. */
  judged: boolean;
  /**
   * Judged and met: no invariant broken — a second effect breaks exactly-one, so the count needs no test of
   * its own (always true for a cell that is not judged). None is not a miss by itself: a client
   * that gave up while the key was held (a lock's TTL outlasting its attempts) without being told it
   * succeeded made none, and no invariant breaks; a client told "done" with none made breaks one.
   */
  ok: boolean;
}

/**
 * Runs conformance's columns for the service (src/real/service-conformance.ts:
 * no fault, lost answers, a crash at each crash point, a concurrent duplicate,
 * two instances, a kill at each step and as the answer leaves, key reuse) for
 * each key source of the built-in client, on the simulation only, each on the
 * default schedule as conformance's simulated side runs it — so a cell and
 * that column of `conformance --service --key-source K` agree. `run` runs one
 * cell (the HTML page observes it for the stepper).
 */
export async function serviceMatrixCells(
  def: ServiceDefinition,
  module: string,
  seed = 1,
  run: (s: Scenario, reached: Reached) => Promise<ScenarioRun> = (s, reached) => runScenario(s, { service: def, choices: new ListChoice([]), reached }),
  answers?: Answers,
): Promise<ServiceMatrixCell[]> {
  registerService(module, def);
  const out: ServiceMatrixCell[] = [];
  for (const keySource of KEY_SOURCES) {
    for (const c of serviceColumns(def, module, keySource, seed)) {
      let s = c.scenario;
      if (s.faults.kill !== undefined) s = { ...s, faults: { ...s.faults, kill: { ...s.faults.kill, restartAfterMs: await restartBetweenRetries(s, def) } } };
      const reached = new Reached();
      const r = await run(s, reached);
      const effects = r.reports.op1 ?? 0;
      const violations = [...new Set(r.violations.map((v) => v.invariant))].sort();
      const judged = JUDGED_KEY_SOURCES.includes(keySource);
      // What the judged cells were answered: a matrix of a service that never did its work judges nothing.
      if (judged && answers !== undefined) noteRun(answers, r, reached);
      const scenario: Scenario = { ...s, name: `${c.name} · ${def.name} · ${keySource}`, schedule: scheduleOf(r.result.choices), expect: { reports: { op1: effects }, violations } };
      out.push({ keySource, column: c.name, scenario, effects, violations, judged, ok: !judged || violations.length === 0 });
    }
  }
  return out;
}

/** The scenarios in order of first appearance (without a key there is no key_reuse). */
export function serviceMatrixColumns(cells: readonly ServiceMatrixCell[]): string[] {
  return [...new Set(cells.map((c) => c.column))];
}

/** Where `--write-scenarios DIR` puts a cell: DIR/<scenario>/<keySource>.json (a scenario's ':' made '_' for every file system). */
export function serviceMatrixFileName(c: Pick<ServiceMatrixCell, 'column' | 'keySource'>): string {
  return `${c.column.replace(/[^A-Za-z0-9_.-]/g, '_')}/${c.keySource}.json`;
}
