import { describe, expect, it } from 'vitest';
import { runCli } from './child.js';

// `conformance --app` on an app that answers 202 and writes the order from a
// 200 ms timer (src/app/fixtures/accepted-later.ts). The simulation runs the
// process's timers to quiescence; the real side read the file as soon as the
// client had its 202, before the job was due, and counted 0 orders against
// the simulation's 1 (with exactly-one and id-exists "broken" for real only).
// The real side now waits for each process's deferred work, bounded by a
// settle limit that the output names when it runs out.
describe('conformance --app: work deferred past the answer is awaited on the real side', () => {
  it('a 202 whose order a timer writes: 1 order in both worlds, in every column asked', async () => {
    const r = await runCli(['conformance', '--app', 'src/app/fixtures/accepted-later.ts', '--columns', 'no_fault,lost_response', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { differences: number; cells: Array<{ column: string; same: boolean; sim: { effects: number }; real: { effects: number; violations: string[]; unsettled: string[] } }> };
    expect(j.cells.map((c) => [c.column, c.sim.effects, c.real.effects, c.real.violations, c.real.unsettled, c.same])).toEqual([
      ['no_fault', 1, 1, [], [], true],
      ['lost_response', 1, 1, [], [], true],
    ]);
    expect(j.differences).toBe(0);
  }, 120_000);

  it('a process that never goes idle (a timer that re-arms itself) is read at the settle limit, and the output says so', async () => {
    const text = await runCli(['conformance', '--app', 'src/app/fixtures/accepted-later-poller.ts', '--columns', 'no_fault']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/no_fault\s+│ 1 \| 1\s+│ succeeded \| succeeded\s+│ - \| -\s+│ yes\s+│/);
    expect(text.stdout).toMatch(/UNSETTLED no_fault: real s0 still at work \(requests or deferred timers\) after the 10 s settle limit; its orders were read then/);
  }, 120_000);
});
