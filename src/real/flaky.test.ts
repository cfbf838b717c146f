import { describe, expect, it } from 'vitest';
import { runCli } from './child.js';
import { invariantRows, runSimulated, runVirtualTime, stepPattern } from './flaky.js';
import { registerService } from '../service/registry.js';
import twoTransactions from '../../examples/two-transactions/service.js';
import paymentsAtomic from '../../examples/payments-atomic/service.js';
import replayDiffers from '../../examples/replay-differs/service.js';

const base = { runs: 8, variant: 'key_split' as const, slowMs: 2, staggerMaxMs: 4, seed: 1, schedulesMax: 400 };

describe('flakiness lab', () => {
  it('the simulation finds the failing interleavings of key_split and none for key_atomic', async () => {
    const split = await runSimulated(base);
    expect(split.staggers.map((s) => s.staggerMs)).toEqual([0, 1, 2, 3]);
    expect(split.failing).toBeGreaterThan(0);
    expect(split.staggers[3]).toMatchObject({ failing: 0, complete: true }); // 3 ms > 2 ms processing: no race left
    expect(split.failingPatterns[0]!.pattern).toMatch(/w\d#\d:\w+/);
    const atomic = await runSimulated({ ...base, variant: 'key_atomic' });
    expect(atomic.failing).toBe(0);
    expect(atomic.schedules).toBeGreaterThan(0);
  });

  it('the wall-clock test runs on virtual time: sleeps vanish, the outcome is deterministic per seed', async () => {
    const a = await runVirtualTime({ ...base, staggerMaxMs: 40 });
    const b = await runVirtualTime({ ...base, staggerMaxMs: 40 });
    expect(a.perRun).toEqual(b.perRun);
    // Timer time passed on the virtual clock. How it compares with real time is a figure of the machine, printed, never asserted (it failed under load).
    expect(a.virtualMs).toBeGreaterThan(0);
    console.log(`virtual time ${a.virtualMs} ms in ${a.wallMs.toFixed(0)} ms of wall clock`);
    // The race window is the processing time (2 ms); fake timers count whole
    // milliseconds, so a stagger in [2, 3) ties with the end of processing.
    for (const r of a.perRun) if (r.staggerMs < 2 || r.staggerMs >= 3) expect(r.failed).toBe(r.staggerMs < 2);
    expect(a.perRun.some((r) => r.failed)).toBe(true);
    expect(a.perRun.some((r) => !r.failed)).toBe(true);
  });

  it('stepPattern keeps only server steps', () => {
    expect(stepPattern([
      { t: 0, chosen: 1, of: ['op1.w0:start', 'op1.w1:start'], preempted: false },
      { t: 1, chosen: 0, of: ['s0/op1.w1#2:check', 's0/op1.w0#1:check'], preempted: false },
    ])).toBe('w1#2:check');
  });

  it('retrysim flaky --runs 3 --json runs all three approaches end to end', async () => {
    const r = await runCli(['flaky', '--runs', '3', '--stagger-max-ms', '3', '--schedules-max', '200', '--json']);
    // key_split keeps two reports on some interleavings: the table says exactly-one fails, so does the exit code.
    expect(r.code, r.stderr).toBe(1);
    const j = JSON.parse(r.stdout) as { wallClock: { runs: number; upperBound95: number }; virtualTime: { runs: number }; simulated: { schedules: number }; verdict: string; invariants: Array<{ invariant: string; verdict: string }> };
    expect(j.verdict).toBe('fails');
    expect(j.invariants.find((x) => x.invariant === 'exactly-one')?.verdict).toBe('fails');
    expect(j.wallClock.runs).toBe(3);
    expect(j.virtualTime.runs).toBe(3);
    expect(j.simulated.schedules).toBeGreaterThan(0);
    expect(j.wallClock.upperBound95).toBeGreaterThan(0.6); // 3 runs bound little whatever they show
    const bad = await runCli(['flaky', '--runs', 'x']);
    expect(bad.code).toBe(2);
  });

  it('retrysim flaky explains its own marks: a cut enumeration (+), the rule of three, and no API name as the way to replay', async () => {
    const r = await runCli(['flaky', '--runs', '3', '--stagger-max-ms', '3', '--schedules-max', '200']);
    expect(r.code, r.stderr).toBe(1); // key_split: exactly-one fails
    // 200 schedules per stagger cannot hold every interleaving at stagger 0: the count is a lower bound.
    expect(r.stdout).toMatch(/\d+\+ \(bounded\)/);
    expect(r.stdout).toMatch(/\+: the enumeration stopped at --schedules-max \(200\) schedules at \d+ of 3 staggers/);
    // The wall-clock line is the real machine's; when it passes, the 3/n it compares with is named.
    if (r.stdout.includes('3/n')) expect(r.stdout).toContain('the "rule of three" (3/n)');
    expect(r.stdout).not.toContain('ListChoice');
  });

  it('--app: the lab runs on an unmodified app — its virtual-time runs on the simulation\'s host, the table, the reproduce line and --json in the app\'s words; a correct app holds', async () => {
    // Every stagger below the 2 ms processing time races: the check-then-insert app makes two orders in every virtual-time run.
    const r = await runCli(['flaky', '--app', 'examples/app-plain-http/app.ts', '--runs', '3', '--stagger-max-ms', '2', '--schedules-max', '200']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain("retrysim flaky — seed 1; app orders-check-then-insert (examples/app-plain-http/app.ts)");
    expect(r.stdout).toMatch(/│ same runs on virtual time \(simulation host\) │ 3 +│ 3 +│/);
    expect(r.stdout).toContain('retrysim check --app examples/app-plain-http/app.ts --explore exhaustive.');
    expect(r.stdout).toContain('check --app judges it with two');
    expect(r.stdout).not.toContain('--service');
    const j = JSON.parse((await runCli(['flaky', '--app', 'examples/app-plain-http/app.ts', '--runs', '3', '--stagger-max-ms', '2', '--schedules-max', '200', '--json'])).stdout) as { verdict: string; virtualTime: { how: string; failures: number; perRun: Array<{ reports: number }> } };
    expect(j.verdict).toBe('fails');
    expect(j.virtualTime).toMatchObject({ how: 'simulation host', failures: 3 });
    expect(j.virtualTime.perRun.map((x) => x.reports)).toEqual([2, 2, 2]);
    // The same lanes on the app that claims its key first: nothing fails anywhere, exit 0.
    const ok = await runCli(['flaky', '--app', 'examples/app-plain-http/app-claim.ts', '--runs', '3', '--stagger-max-ms', '2', '--schedules-max', '200']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/│ same runs on virtual time \(simulation host\) │ 3 +│ 0 +│/);
    expect(ok.stdout).toContain('No schedule fails: orders-claim keeps exactly-one');
    // An app answering duplicates from a Map at the top of its file is loaded once for the whole lab: each schedule has its own
    // key, as each wall-clock run on its one server process has (the same key met an earlier schedule's answer: exactly-one and id-exists failed).
    const cache = await runCli(['flaky', '--app', 'src/app/fixtures/module-map-app.ts', '--runs', '3', '--stagger-max-ms', '3', '--schedules-max', '100', '--json']);
    expect(cache.code, cache.stderr).toBe(0);
    expect(JSON.parse(cache.stdout)).toMatchObject({ verdict: 'holds', virtualTime: { failures: 0 }, simulated: { failing: 0 } });
    const both = await runCli(['flaky', '--app', 'examples/app-plain-http/app.ts', '--service', 'examples/payments-atomic/service.ts']);
    expect(both.code).toBe(2);
    expect(both.stderr.trim()).toBe('retrysim flaky: give --service or --app, not both');
  }, 120_000);

  describe('on a user service (--service)', () => {
    const tt = { ...base, service: { def: twoTransactions, module: 'examples/two-transactions/service.ts' } };
    const atomic = { ...base, service: { def: paymentsAtomic, module: 'examples/payments-atomic/service.ts' } };

    it('the simulation finds the two-transaction service\'s failing interleavings (named by its own steps) and none for the atomic one', async () => {
      registerService(tt.service.module, twoTransactions);
      registerService(atomic.service.module, paymentsAtomic);
      const t = await runSimulated(tt);
      expect(t.failing).toBeGreaterThan(0);
      expect(t.failingPatterns[0]!.pattern).toMatch(/^w\d#\d:(check|create|remember)( w\d#\d:(check|create|remember))*$/);
      const a = await runSimulated(atomic);
      expect(a.failing).toBe(0);
      expect(a.schedules).toBeGreaterThan(0);
    });

    it('the same test on virtual time counts the service\'s effects, deterministically per seed', async () => {
      const a = await runVirtualTime(tt);
      const b = await runVirtualTime(tt);
      expect(a.perRun).toEqual(b.perRun);
      expect(a.perRun.some((r) => r.failed && r.reports === 2)).toBe(true);
      expect(a.perRun.some((r) => !r.failed && r.reports === 1)).toBe(true);
      const ok = await runVirtualTime({ ...atomic, staggerMaxMs: 40 });
      expect(ok.failures).toBe(0);
    });

    it('judges the invariants a service campaign judges, with its checkers: replay-differs fails replay-equals-first on every side (and keeps exactly one order); payments-atomic holds them all', async () => {
      const rd = { ...base, service: { def: replayDiffers, module: 'examples/replay-differs/service.ts' } };
      registerService(rd.service.module, replayDiffers);
      registerService(atomic.service.module, paymentsAtomic);
      const sim = await runSimulated(rd);
      expect(sim.judged).toEqual(['exactly-one', 'id-exists', 'stable-key', 'replay-equals-first']);
      expect(sim.byInvariant['replay-equals-first']).toBeGreaterThan(0);
      expect(sim.byInvariant['exactly-one']).toBeUndefined();
      expect(sim.examples['replay-equals-first']).toMatch(/answered HTTP 200 .* but the first success .* was HTTP 201/);
      const vt = await runVirtualTime(rd);
      expect(vt.perRun.every((x) => x.reports === 1)).toBe(true);
      expect(vt.perRun.some((x) => x.violations.some((v) => v.invariant === 'replay-equals-first'))).toBe(true);
      expect(vt.failures).toBeGreaterThan(0);
      const rows = invariantRows(true, sim, vt.perRun, []);
      expect(rows.find((x) => x.invariant === 'replay-equals-first')).toMatchObject({ verdict: 'fails', wallClock: 0, virtualTime: vt.failures, simulated: sim.byInvariant['replay-equals-first'] });
      expect(rows.find((x) => x.invariant === 'exactly-one')).toMatchObject({ verdict: 'holds' });
      expect(rows.find((x) => x.invariant === 'tenant-isolation')).toMatchObject({ notJudged: expect.stringContaining('one tenant') });
      expect(rows.find((x) => x.invariant === 'tenant-isolation')!.verdict).toBeUndefined();
      const aSim = await runSimulated(atomic);
      const aVt = await runVirtualTime(atomic);
      const aRows = invariantRows(true, aSim, aVt.perRun, []);
      expect(aRows.filter((x) => x.verdict !== undefined).map((x) => [x.invariant, x.verdict])).toEqual([
        ['exactly-one', 'holds'], ['id-exists', 'holds'], ['stable-key', 'holds'], ['replay-equals-first', 'holds'],
      ]);
    });

    it('retrysim flaky --service on replay-differs: the table and --json say replay-equals-first fails, exit 1; payments-atomic holds, exit 0', async () => {
      const args = ['--runs', '2', '--stagger-max-ms', '2', '--schedules-max', '100'];
      const r = await runCli(['flaky', '--service', 'examples/replay-differs/service.ts', ...args, '--json']);
      expect(r.code, r.stderr).toBe(1);
      const j = JSON.parse(r.stdout) as { verdict: string; invariants: Array<{ invariant: string; verdict?: string; wallClock: number | null }> };
      expect(j.verdict).toBe('fails');
      expect(j.invariants.find((x) => x.invariant === 'replay-equals-first')).toMatchObject({ verdict: 'fails' });
      const t = await runCli(['flaky', '--service', 'examples/replay-differs/service.ts', ...args]);
      expect(t.code, t.stderr).toBe(1);
      expect(t.stdout).toMatch(/│ replay-equals-first │ fails /);
      expect(t.stdout).not.toMatch(/keeps exactly one order/);
      const ok = await runCli(['flaky', '--service', 'examples/payments-atomic/service.ts', ...args]);
      expect(ok.code, ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/│ replay-equals-first │ holds /);
      expect(ok.stdout).not.toMatch(/│ fails /);
    });

    it('retrysim flaky --service runs all three approaches against the service (wall clock: retrysim serve --service); bad flags exit 2', async () => {
      const r = await runCli(['flaky', '--service', 'examples/two-transactions/service.ts', '--runs', '3', '--stagger-max-ms', '3', '--schedules-max', '200', '--json']);
      expect(r.code, r.stderr).toBe(1); // two orders on some interleavings: exactly-one fails
      const j = JSON.parse(r.stdout) as { options: { service: { name: string } }; wallClock: { runs: number; perRun: Array<{ reports: number }> }; virtualTime: { runs: number }; simulated: { failing: number } };
      expect(j.options.service.name).toBe('two-transactions');
      expect(j.wallClock.runs).toBe(3);
      expect(j.wallClock.perRun.every((x) => x.reports >= 1)).toBe(true);
      expect(j.virtualTime.runs).toBe(3);
      expect(j.simulated.failing).toBeGreaterThan(0);
      const both = await runCli(['flaky', '--service', 'examples/two-transactions/service.ts', '--variant', 'key_split']);
      expect(both.code).toBe(2);
      const missing = await runCli(['flaky', '--service', 'examples/nope/service.ts']);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('cannot load');
    });
  });
});
