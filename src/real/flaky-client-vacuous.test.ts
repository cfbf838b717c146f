/**
 * `flaky --client` on a client whose requests never get through (a path the
 * service does not have: every answer 404, and it gives up) breaks no check
 * — it sends no duplicate and reuses no key — so the lab said "holds", exit
 * 0, where `check --client` says inconclusive. Now the lab says so too, per
 * side, in the table, `--json` and the exit code (4).
 */
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { vacuousSides } from './flaky-client.js';

describe('flaky --client: a client that never gets through is no pass', () => {
  it('every answer 404 on every side: inconclusive, exit 4, the first refusal quoted; the table and --json say the same', async () => {
    const args = ['flaky', '--client', 'src/client/fixtures/wrong-path-client.ts', '--runs', '2', '--spread-ms', '3', '--schedules-max', '20'];
    const j = await runMain([...args, '--json']);
    expect(j.code, j.err).toBe(4);
    const r = JSON.parse(j.out) as { verdict: string; inconclusive: string; wallClock: { failures: number; succeeded: number; firstRefusal: string }; virtualTime: { succeeded: number }; simulated: { failing: number; succeeded: number } };
    expect(r.verdict).toBe('inconclusive');
    expect(r.wallClock).toMatchObject({ failures: 0, succeeded: 0 });
    expect(r.wallClock.firstRefusal).toMatch(/^op1\.w0 POST \/v2\/items → 404/);
    expect(r.virtualTime.succeeded).toBe(0);
    expect(r.simulated).toMatchObject({ failing: 0, succeeded: 0 });
    for (const side of ['on the wall clock', 'on virtual time', 'in the simulation']) expect(r.inconclusive).toContain(`${side} no request`);
    const t = await runMain(args);
    expect(t.code).toBe(4);
    expect(t.out).toContain("Wall clock: no check failed in 2 of 2, but no request was answered 2xx, so passing says nothing (see the verdict).");
    expect(t.out).toMatch(/Verdict: inconclusive — no check failed, but on the wall clock no request of the 2 runs was answered 2xx \(the first: op1\.w0 POST \/v2\/items → 404/);
  }, 120_000);

  it('one side that never succeeded is enough; a side with no runs at all is not counted', () => {
    expect(vacuousSides([
      { side: 'on the wall clock', what: 'runs', total: 3, succeeded: 0, firstRefusal: 'op1.w0 PUT /orders/flaky-0 → 401' },
      { side: 'in the simulation', what: 'schedules', total: 40, succeeded: 40 },
    ])).toBe('on the wall clock no request of the 3 runs was answered 2xx (the first: op1.w0 PUT /orders/flaky-0 → 401) — a client that never succeeds keeps every check vacuously');
    expect(vacuousSides([{ side: 'on the wall clock', what: 'runs', total: 3, succeeded: 1 }, { side: 'in the simulation', what: 'schedules', total: 0, succeeded: 0 }])).toBeUndefined();
  });
});
