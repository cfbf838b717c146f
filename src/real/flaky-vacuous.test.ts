/**
 * `flaky --service` on a service that never makes anything said "holds"
 * (exit 0) above a line saying keeping the invariants said nothing; on a
 * service whose request leaves a rejection unhandled it ended with Node's
 * stack trace and exit 1 (read as "fails"). Now: inconclusive, exit 4, in
 * the table, --json and the exit code; the crash one line, exit 2.
 */
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { noEffectSides, runWallClock } from './flaky.js';
import { loadService } from '../service/load.js';
import { ServiceError } from '../service/errors.js';

const ARGS = ['--runs', '2', '--stagger-max-ms', '3'];

describe('flaky --service: a lab in which nothing is made is no pass', () => {
  it('every request answered 503, nothing made on any side: inconclusive, exit 4; no invariant row says holds', async () => {
    const args = ['flaky', '--service', 'src/service/fixtures/paused-orders.ts', ...ARGS];
    const j = await runMain([...args, '--json']);
    expect(j.code, j.err).toBe(4);
    const r = JSON.parse(j.out) as { verdict: string; inconclusive: string; invariants: Array<{ invariant: string; verdict?: string }> };
    expect(r.verdict).toBe('inconclusive');
    expect(r.inconclusive).toBe('on the wall clock none of the 2 runs made any order; on virtual time none of the 2 runs made any order; in the simulation none of the ' +
      `${/simulation none of the (\d+) schedules/.exec(r.inconclusive)?.[1]} schedules made any order — a test in which nothing is made keeps every invariant vacuously`);
    const judged = r.invariants.filter((x) => x.verdict !== undefined);
    expect(judged.map((x) => x.invariant)).toContain('exactly-one');
    expect(judged.every((x) => x.verdict === 'inconclusive')).toBe(true);
    const t = await runMain(args);
    expect(t.code).toBe(4);
    expect(t.out).toMatch(/│ exactly-one +│ inconclusive/);
    expect(t.out).toContain('Verdict: inconclusive — no invariant failed, but on the wall clock none of the 2 runs made any order;');
    expect(t.out).toContain('Wall clock: 0/2 failed, but no run made any order, so passing says nothing (see the verdict).');
    expect(t.out).not.toMatch(/│ holds/);
  }, 120_000);

  it('a request leaving a rejection unhandled: one line naming it, exit 2 (it was a stack trace and exit 1)', async () => {
    const r = await runMain(['flaky', '--service', 'src/service/fixtures/crashes-on-every-request.ts', ...ARGS]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^retrysim flaky: service 'crashes-on-every-request': a request left a promise rejection unhandled \(Error: config missing: NOTIFY_URL \(at notify \(.*crashes-on-every-request\.ts:\d+:\d+\)\)\), which ends a real Node process/);
  }, 120_000);

  it('the wall-clock lane names a server process that died under it (a refused port said nothing of why)', async () => {
    const module = 'src/service/fixtures/crashes-on-every-request.ts';
    const def = await loadService(module, { clock: 'real' });
    const e = await runWallClock({ service: { def, module }, runs: 2, variant: 'key_split', slowMs: 2, staggerMaxMs: 3, seed: 1, schedulesMax: 10 }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ServiceError);
    expect((e as Error).message).toMatch(/its server process \(retrysim serve\) exited \(code 1\): Error: config missing: NOTIFY_URL, found at wall-clock run \d of 2$/);
  }, 120_000);

  it('one side with nothing made is enough; a side that made something, or ran nothing, is not named', () => {
    expect(noEffectSides('order', [
      { side: 'on the wall clock', what: 'runs', counts: [0, 0, 0] },
      { side: 'in the simulation', what: 'schedules', counts: [0, 1], total: 40 },
    ])).toBe('on the wall clock none of the 3 runs made any order — a test in which nothing is made keeps every invariant vacuously');
    expect(noEffectSides('order', [{ side: 'on virtual time', what: 'runs', counts: [] }, { side: 'in the simulation', what: 'schedules', counts: [1], total: 4 }])).toBeUndefined();
  });
});
