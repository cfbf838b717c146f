import { describe, expect, it } from 'vitest';
import { runCli } from './child.js';
import { runServiceConformance } from './service-conformance.js';
import { loadService } from '../service/load.js';

// `retrysim conformance --service`: a user's service, simulation vs real
// `serve --service` processes. It must agree where the model is right
// (payments-atomic, every column, a real kill -9 included) and go red where
// reality differs: the canary service has a units bug only a wall clock
// exposes, so a conformance that compared nothing (or compared the sim
// with itself) would miss it.
describe('conformance --service: the simulation held against real processes', () => {
  it('payments-atomic agrees in every column, the real kill columns included', async () => {
    const module = 'examples/payments-atomic/service.ts';
    const cells = await runServiceConformance({ def: await loadService(module), module });
    expect(cells.map((c) => c.column)).toEqual(['no_fault', 'lost_response', 'lost_answer', 'crash_at:after-claim', 'concurrent_duplicate', 'two_instances', 'kill_at:claim', 'kill_at:charge', 'kill_at:finish', 'kill_at:answer', 'key_reuse']);
    for (const c of cells) expect(c, c.column).toMatchObject({ same: true });
    expect(cells.reduce((n, c) => n + c.real.kills, 0)).toBe(4);
    expect(cells.find((c) => c.column === 'lost_response')!.real.effects).toBe(1);
  }, 120_000);

  it('the canary (a replay window in seconds compared with milliseconds) differs for real: table, --json and exit code say so', async () => {
    const args = ['conformance', '--service', 'src/real/fixtures/replay-window-units.ts', '--columns', 'no_fault,lost_response'];
    const [json, text] = await Promise.all([runCli([...args, '--json']), runCli(args)]);
    expect(json.code, json.stderr).toBe(1);
    const j = JSON.parse(json.stdout) as { differences: number; cells: Array<{ column: string; same: boolean; sim: { effects: number }; real: { effects: number; violations: string[] } }> };
    expect(j.differences).toBe(1);
    expect(j.cells.map((c) => [c.column, c.same, c.sim.effects, c.real.effects])).toEqual([['no_fault', true, 1, 1], ['lost_response', false, 1, 2]]);
    expect(j.cells[1]!.real.violations).toEqual(['exactly-one']);
    expect(text.code).toBe(1);
    // The canary declares progress: the "in the end" column says the operation succeeded in both worlds.
    expect(text.stdout).toMatch(/lost_response\s+│ 1 \| 2\s+│ succeeded \| succeeded\s+│ - \| exactly-one\s+│ ≠ no\s+│/);
    expect(text.stdout).toMatch(/no_fault\s+│ 1 \| 1\s+│ succeeded \| succeeded\s+│ - \| -\s+│ yes\s+│/);
    expect(text.stdout).toMatch(/DIFFERENT lost_response: sim 1 payment\(s\) \[\], real 2 \[exactly-one\]/);
    expect(text.stdout).toMatch(/1 difference\(s\)\./);
    // stderr is a pipe here, as in CI: one progress line per column, no carriage returns.
    expect(text.stderr).not.toMatch(/\r/);
    expect(text.stderr).toMatch(/^\[1\/2\] no_fault\n\[2\/2\] lost_response\n/m);
  }, 120_000);

  it('kill_at:answer is a real kill -9 after the work: a cache of answers in process memory pays twice in both worlds', async () => {
    const module = 'src/real/fixtures/memory-answer-cache.ts';
    const [cell] = await runServiceConformance({ def: await loadService(module), module, columns: ['kill_at:answer'] });
    expect(cell).toMatchObject({ column: 'kill_at:answer', same: true, sim: { effects: 2 }, real: { effects: 2, kills: 1 } });
    expect(cell!.real.violations).toContain('exactly-one');
  }, 120_000);

  it('progress is judged on both sides: a claim without a lease, killed at charge, never pays in either world (recovery gives up, progress broken), while a kill before the claim recovers', async () => {
    const args = ['conformance', '--service', 'src/real/fixtures/lease-never-expires.ts', '--columns', 'kill_at:claim,kill_at:charge'];
    const r = await runCli([...args, '--json']);
    expect(r.code, r.stderr).toBe(0); // both worlds agree: no difference
    const j = JSON.parse(r.stdout) as { cells: Array<{ column: string; same: boolean; sim: { effects: number; violations: string[]; eventually: string }; real: { effects: number; violations: string[]; eventually: string; kills: number } }> };
    const [claim, charge] = j.cells;
    expect(claim).toMatchObject({ column: 'kill_at:claim', same: true, sim: { effects: 1, violations: [], eventually: 'succeeded' }, real: { effects: 1, violations: [], eventually: 'succeeded', kills: 1 } });
    expect(charge).toMatchObject({ column: 'kill_at:charge', same: true, sim: { effects: 0, violations: ['progress'], eventually: 'gave_up' }, real: { effects: 0, violations: ['progress'], eventually: 'gave_up', kills: 1 } });
  }, 120_000);

  it('bad flags and a broken service exit 2 with one line', async () => {
    const [rows, column, broken, keySource] = await Promise.all([
      runCli(['conformance', '--service', 'examples/payments-atomic/service.ts', '--rows', 'naive/none']),
      runCli(['conformance', '--service', 'examples/payments-atomic/service.ts', '--columns', 'kill_at:nope']),
      runCli(['conformance', '--service', 'src/real/fixtures/no-such-service.ts']),
      runCli(['conformance', '--key-source', 'tool_call']),
    ]);
    for (const r of [rows, column, broken, keySource]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(rows.stderr).toMatch(/--rows names matrix rows of the built-in tracker/);
    expect(column.stderr).toMatch(/unknown --columns entry 'kill_at:nope'; known: no_fault, .*kill_at:claim, kill_at:charge, kill_at:finish, kill_at:answer, key_reuse/);
    expect(broken.stderr).toMatch(/cannot load: no such file/);
    expect(keySource.stderr).toMatch(/--key-source goes with --service/);
  });
});
