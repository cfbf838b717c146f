// The flakiness lab on a service that answers 202 and writes its effect
// later, from a timer its handler arms and does not await. Found by an
// outside user: the wall-clock and virtual-time lanes judged as soon as the
// two workers were done — before the timer wrote the export — so a correct
// service "failed" exactly-one and id-exists in 5/5 runs of both lanes
// (exit 1) while no simulated schedule failed and check --service, which
// counts deferred work as part of the run, found nothing. The wall-clock
// lane now waits (bounded) until `serve` reports no such timer pending; the
// virtual-time lane fires the pending timers on virtual time.
import { describe, expect, it } from 'vitest';
import { runCli } from './child.js';
import { runVirtualTime } from './flaky.js';
import { registerService } from '../service/registry.js';
import acceptedLater from './fixtures/accepted-later.js';
import acceptedLaterUnkeyed from './fixtures/accepted-later-unkeyed.js';

const base = { runs: 3, variant: 'key_split' as const, slowMs: 2, staggerMaxMs: 3, seed: 1, schedulesMax: 50 };
const LATER = 'src/real/fixtures/accepted-later.ts';
const UNKEYED = 'src/real/fixtures/accepted-later-unkeyed.ts';
const cli = ['--runs', '3', '--stagger-max-ms', '3', '--schedules-max', '50'];

interface Run { reports: number; failed: boolean; unsettled?: true; violations: Array<{ invariant: string; detail: string }> }
interface Json {
  verdict: string;
  wallClock: { failures: number; unsettled: number; perRun: Run[] };
  virtualTime: { failures: number; perRun: Run[] };
  simulated: { failing: number; schedules: number; effectCounts: number[] };
  invariants: Array<{ invariant: string; verdict?: string }>;
}

describe('the flakiness lab judges a run once the work deferred past its answers is done', () => {
  it('virtual time: the export the handler\'s timer writes 50 ms after its 202 is there when the run is judged', async () => {
    registerService(LATER, acceptedLater);
    const v = await runVirtualTime({ ...base, service: { def: acceptedLater, module: LATER } });
    expect(v.perRun.map((r) => [r.reports, r.violations])).toEqual([[1, []], [1, []], [1, []]]);
    expect(v.failures).toBe(0);
    expect(v.virtualMs).toBeGreaterThanOrEqual(3 * 50); // each run's timer ran, on virtual time
  });

  it('retrysim flaky --service on a correct 202 service: holds in all three lanes, exit 0 (was 1: exactly-one and id-exists "failed" on the wall clock and on virtual time)', async () => {
    const r = await runCli(['flaky', '--service', LATER, ...cli, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as Json;
    expect(j.verdict).toBe('holds');
    expect(j.wallClock.perRun.map((x) => [x.reports, x.failed, x.unsettled])).toEqual([[1, false, undefined], [1, false, undefined], [1, false, undefined]]);
    expect(j.wallClock).toMatchObject({ failures: 0, unsettled: 0 });
    expect(j.virtualTime.failures).toBe(0);
    expect(j.simulated.failing).toBe(0);
    expect(j.simulated.effectCounts).toEqual([1]);
    expect(j.invariants.filter((x) => x.verdict !== undefined).map((x) => [x.invariant, x.verdict])).toEqual([
      ['exactly-one', 'holds'], ['id-exists', 'holds'], ['stable-key', 'holds'], ['replay-equals-first', 'holds'],
    ]);
  }, 60_000);

  it('waiting hides no bug: a 202 service that takes the key only when its timer writes makes two exports, and every lane counts two (not zero), exit 1', async () => {
    registerService(UNKEYED, acceptedLaterUnkeyed);
    const v = await runVirtualTime({ ...base, service: { def: acceptedLaterUnkeyed, module: UNKEYED } });
    expect(v.perRun.map((x) => x.reports)).toEqual([2, 2, 2]);
    const r = await runCli(['flaky', '--service', UNKEYED, ...cli]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/│ exactly-one +│ fails +│ \d +│ 3 +│ \d+ +│/); // wall clock: see below
    expect(r.stdout).toMatch(/exactly-one: stagger \d+ ms: .*2 exports/);
    const j = JSON.parse((await runCli(['flaky', '--service', UNKEYED, ...cli, '--json'])).stdout) as Json;
    expect(j.verdict).toBe('fails');
    // On the wall clock the duplicate makes a second export only if it lands inside the 50 ms (a loaded machine may be slower):
    // 1 or 2 per run, never the 0 a read before the timer wrote gave.
    for (const x of j.wallClock.perRun) expect([1, 2]).toContain(x.reports);
    expect(j.wallClock.unsettled).toBe(0);
    expect(j.simulated.effectCounts).toEqual([2]);
  }, 60_000);
});
