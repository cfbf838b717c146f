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

  it('the canary (an answer cache kept at module level, which the simulation loads once for every run and restart) differs for real: table, --json and exit code say so', async () => {
    const args = ['conformance', '--service', 'src/real/fixtures/module-answer-cache.ts', '--columns', 'kill_at:answer'];
    const [json, text] = await Promise.all([runCli([...args, '--json']), runCli(args)]);
    expect(json.code, json.stderr).toBe(1);
    const j = JSON.parse(json.stdout) as { differences: number; cells: Array<{ column: string; same: boolean; sim: { effects: number; violations: string[] }; real: { effects: number; violations: string[]; kills: number } }> };
    expect(j.differences).toBe(1);
    expect(j.cells.map((c) => [c.column, c.same, c.sim.effects, c.real.effects, c.real.kills])).toEqual([['kill_at:answer', false, 0, 2, 1]]);
    expect(j.cells[0]!.sim.violations).toEqual(['exactly-one', 'id-exists']);
    expect(j.cells[0]!.real.violations).toEqual(['exactly-one']);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/kill_at:answer\s+│ 0 \| 2\s+│ .*│ exactly-one, id-exists \| exactly-one\s+│ ≠ no\s+│/);
    expect(text.stdout).toMatch(/DIFFERENT kill_at:answer: sim 0 payment\(s\) \[exactly-one, id-exists\], real 2 \[exactly-one\]/);
    expect(text.stdout).toMatch(/1 difference\(s\)\./);
    // stderr is a pipe here, as in CI: one progress line per column, no carriage returns.
    expect(text.stderr).not.toMatch(/\r/);
    expect(text.stderr).toMatch(/^\[1\/1\] kill_at:answer\n/m);
  }, 120_000);

  it('a replay window in seconds compared with milliseconds (a units bug 1970 hid) fails in both worlds alike, now that the simulation lives in the present', async () => {
    const module = 'src/real/fixtures/replay-window-units.ts';
    const cells = await runServiceConformance({ def: await loadService(module), module, columns: ['no_fault', 'lost_response'] });
    expect(cells.map((c) => [c.column, c.same, c.sim.effects, c.real.effects, c.sim.violations, c.real.violations])).toEqual([
      ['no_fault', true, 1, 1, [], []],
      ['lost_response', true, 2, 2, ['exactly-one'], ['exactly-one']],
    ]);
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
