import { describe, expect, it } from 'vitest';
import { loadScenario } from './load.js';
import { runScenario } from './run.js';
import { ListChoice } from '../sim/choice/list.js';
import type { Scenario } from './schema.js';
import { renumbered } from '../campaign/minimise.js';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

/**
 * An operation's id is an input of the run, not a label: it names the random
 * stream its workers draw their backoff jitter from (`client/<id>/<worker>`,
 * forked from the scenario seed), so a renamed operation is a different run.
 * A counterexample the minimiser shrank to op2 alone (op1 removed) used to
 * keep the name op2; now the minimiser tries the scenario renumbered op1..opN
 * as a candidate of its own — run, searched and judged like any other — and
 * takes it only when it still fails within the preemptions in hand, so the
 * file's schedule, expect and hash are the written scenario's and it replays.
 */
describe('operation ids are inputs of the run, not labels', () => {
  /** The same scenario with operation `from` called `to` (its expect too). */
  const renamed = (s: Scenario, from: string, to: string): Scenario => JSON.parse(JSON.stringify(s).replaceAll(`"${from}"`, `"${to}"`)) as Scenario;

  it('renaming a one-operation counterexample\'s op1 to op2 changes when its retry is sent (its jitter comes from a stream named by the id)', async () => {
    // One operation that retries after a jittered backoff (SPEC §1, bug-report harness: Full Jitter).
    const s = loadScenario('scenarios/found/key_split-exactly-one-470c9edc.json');
    expect(s.operations.map((o) => o.id)).toEqual(['op1']);
    const schedule = () => new ListChoice(s.schedule.map((c) => c.chosen));
    const times = async (x: Scenario) => (await runScenario(x, { choices: schedule() })).operations.flatMap((op) => op.attempts.map((a) => a.startMs));
    const asIs = await times(s);
    expect(asIs.length).toBeGreaterThan(1);
    // Renamed back and forth, the same run: only the id's name differs.
    expect(await times(renamed(renamed(s, 'op1', 'op2'), 'op2', 'op1'))).toEqual(asIs);
    expect(await times(renamed(s, 'op1', 'op2'))).not.toEqual(asIs);
  });

  /** Runs `check --service` and its replay; the written file's ids, the `removed` list and what both commands say. */
  async function shrunk(module: string, args: string[]) {
    const found = tmp('rs-op1-');
    const r = await runMain(['check', '--service', module, ...args, '--found', found, '--json']);
    const j = JSON.parse(r.out) as { counterexample: string; removed: string[]; notMinimal: string[]; violations: string[] };
    const replay = await runMain(['replay', '--service', module, j.counterexample, '--trace']);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out).toContain('expect: met');
    // A second replay in a fresh run: the same trace (the file's hash is the written scenario's).
    const again = await runMain(['replay', '--service', module, j.counterexample, '--json']);
    expect(again.code).toBe(0);
    expect(replay.out).toContain(`trace ${(JSON.parse(again.out) as { traceHash: string }).traceHash}`);
    return { j, ids: loadScenario(j.counterexample).operations.map((o) => o.id), replay: replay.out };
  }

  it('a random counterexample whose op1 the minimiser removed is renumbered: the file, check and replay say op1', async () => {
    // Seed 5: the first failure has two operations, and the minimiser removes op1.
    const { j, ids, replay } = await shrunk('examples/lease-without-fencing/service.ts', ['--seed', '5', '--runs', '2000']);
    expect(j.removed).toContain('operation op1');
    expect(j.removed.at(-1)).toBe('renumbered op2 → op1');
    expect(ids).toEqual(['op1']);
    expect(j.notMinimal).toEqual([]);
    expect(replay).toMatch(/^effects held: op1=2$/m);
    expect(replay).not.toContain('op2');
  }, 60_000);

  it('a PCT counterexample shrunk to one operation is op1, minimal, and replays (exit 0)', async () => {
    // Seed 4 with PCT: the first failure's op1 goes, op2 is what fails.
    const { j, ids, replay } = await shrunk('examples/lease-without-fencing/service.ts', ['--explore', 'pct', '--seed', '4', '--runs', '300']);
    expect(j.violations).toEqual(['exactly-one']);
    expect(j.removed[0]).toBe('operation op1');
    expect(j.removed.at(-1)).toBe('renumbered op2 → op1');
    expect(ids).toEqual(['op1']);
    expect(j.notMinimal).toEqual([]);
    expect(replay).toContain('exactly-one (op1)');
    expect(replay).not.toContain('op2');
  }, 60_000);

  it('renumbered: generated ids only, keyFrom and expect follow, nothing when already op1..opN', () => {
    const s = loadScenario('scenarios/found/key_split-exactly-one-470c9edc.json');
    expect(renumbered(s)).toBeUndefined();
    const two: Scenario = { ...s, operations: [{ ...s.operations[0]!, id: 'op2' }, { ...s.operations[0]!, id: 'op5', keyFrom: 'op2' }], expect: { ...s.expect, reports: { op2: 2, op5: 1 } } };
    const r = renumbered(two)!;
    expect(r.what).toBe('renumbered op2 → op1, op5 → op2');
    expect(r.scenario.operations.map((o) => [o.id, o.keyFrom])).toEqual([['op1', undefined], ['op2', 'op1']]);
    expect(r.scenario.expect.reports).toEqual({ op1: 2, op2: 1 });
    // A name someone chose is theirs.
    expect(renumbered({ ...s, operations: [{ ...s.operations[0]!, id: 'alice' }] })).toBeUndefined();
  });
});
