import { describe, expect, it } from 'vitest';
import { loadScenario } from './load.js';
import { runScenario } from './run.js';
import { ListChoice } from '../sim/choice/list.js';
import type { Scenario } from './schema.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMain } from '../testing/cli.js';

/**
 * Why a shrunk counterexample keeps its operations' ids — a one-operation
 * file may hold only `op2` once the minimiser removed op1 — instead of
 * renumbering them op1..opN: an id names the random stream its workers draw
 * their backoff jitter from (`client/<id>/<worker>`, forked from the
 * scenario seed), so a renamed operation is a different run, and the
 * schedule and `expect` recorded for it would no longer be its own. The
 * `removed` list says what went ("operation op1"); nothing else names it.
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

  it('a counterexample shrunk to op2 alone: check and replay speak of op2 only; op1 appears only as what was removed', async () => {
    const found = mkdtempSync(join(tmpdir(), 'rs-op2-'));
    const module = 'examples/lease-without-fencing/service.ts';
    // Seed 5: the first failure has two operations, and the minimiser removes op1.
    const r = await runMain(['check', '--service', module, '--seed', '5', '--runs', '2000', '--found', found, '--json']);
    const j = JSON.parse(r.out) as { counterexample: string; removed: string[]; violations: string[] };
    expect(j.removed).toContain('operation op1');
    expect((loadScenario(j.counterexample)).operations.map((o) => o.id)).toEqual(['op2']);
    expect(r.out.replaceAll('"operation op1"', '')).not.toContain('op1');
    const text = await runMain(['check', '--service', module, '--seed', '5', '--runs', '2000', '--found', found]);
    expect(text.out).toContain('exactly-one (op2)');
    expect(text.out).not.toContain('op1');
    const replay = await runMain(['replay', '--service', module, j.counterexample, '--trace']);
    expect(replay.code, replay.err).toBe(0);
    expect(replay.out).toMatch(/^effects held: op2=2$/m);
    expect(replay.out).not.toContain('op1');
  }, 60_000);
});
