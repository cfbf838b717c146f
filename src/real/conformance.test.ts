import { describe, expect, it } from 'vitest';
import { runCli } from './child.js';
import { CONFORMANCE_COLUMNS, runConformance } from './conformance.js';

// The full conformance run (7 rows × 7 columns, ~55 s) is `retrysim
// conformance`; CI runs this subset: one row through every column, plus the
// cells where a wrong strategy visibly differs from a right one for real
// (a real kill -9 with restart; the lease take-over without fencing).
describe('conformance: simulation vs real server processes', () => {
  it('key_atomic/tool_call agrees in every column, the real kill column included', async () => {
    const cells = await runConformance({ rows: ['key_atomic/tool_call'] });
    expect(cells.map((c) => c.column)).toEqual(CONFORMANCE_COLUMNS);
    for (const c of cells) expect(c, `${c.row} × ${c.column}`).toMatchObject({ same: true });
    const kill = cells.find((c) => c.column === 'kill_mid_request')!;
    expect(kill.real.kills).toBe(1);
  });

  it('wrong strategies fail for real exactly as the model says', async () => {
    const cells = [
      ...(await runConformance({ rows: ['naive/none', 'memory_singleflight/tool_call'], columns: ['kill_mid_request'] })),
      ...(await runConformance({ rows: ['key_atomic_nofence/tool_call'], columns: ['slow_takeover'] })),
      ...(await runConformance({ rows: ['key_split/tool_call'], columns: ['crash_mid_request'] })),
    ];
    for (const c of cells) expect(c, `${c.row} × ${c.column}`).toMatchObject({ same: true });
    expect(cells.find((c) => c.row === 'key_atomic_nofence/tool_call')!.real.reports).toBe(2);
    expect(cells.find((c) => c.row === 'key_split/tool_call')!.real.reports).toBe(2);
  });

  it('retrysim conformance --json exits 0 when the cells agree; bad flags exit 2', async () => {
    const ok = await runCli(['conformance', '--json', '--rows', 'key_atomic/business', '--columns', 'model_new_id']);
    expect(ok.code, ok.stderr).toBe(0);
    const j = JSON.parse(ok.stdout) as { differences: number; cells: Array<{ sim: { reports: number }; real: { reports: number } }> };
    expect(j.differences).toBe(0);
    expect(j.cells).toHaveLength(1);
    expect(j.cells[0]!.real.reports).toBe(1);
    const bad = await runCli(['conformance', '--columns', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown --columns entry 'nope'/);
  });
});
