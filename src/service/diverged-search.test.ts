// An exhaustive search that runs one schedule twice and sees the runs go
// different ways is module-level state (a limiter whose window never
// passes), not a bug in retrysim. Until 2026-12: "internal error:
// exhaustive exploration diverged … (a bug in retrysim)", exit 1. A
// service keeps its per-process state in memory(), so one line names it,
// exit 2. An app is not malformed for it (a Lambda-style module keeps its
// handler and cache at the top of the file, one per real process): the
// search runs again with one module load per simulated process, as the
// line used to tell users to type, and gives a verdict.
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('an exhaustive search over module-level state', () => {
  it('check --service --explore exhaustive: one line naming the state and the decision that differed, exit 2', async () => {
    const r = await runMain(['check', '--service', 'src/service/fixtures/module-map.ts', '--explore', 'exhaustive', '--found', tmp('rs-diverged-')]);
    expect(r.code, r.out + r.err).toBe(2);
    const lines = r.err.split('\n').filter((l) => l.startsWith('retrysim check:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^retrysim check: service 'module-map': does not run the same way twice on the same schedule \(an exhaustive search's decision #\d+ offered \[[^\]]+\] in an earlier run and \[[^\]]+\] in this one\): .* state kept at module level .*memory\(\)/);
    expect(r.err).not.toContain('internal error');
  }, 120_000);

  it('check --app --explore exhaustive on a module-level rate limiter: says so, searches again with one module load per process, and holds there (exit 0)', async () => {
    // Two fault kinds keep the per-process search short (every fault kind: about 6,000 schedules, 35 s).
    const r = await runMain(['check', '--app', 'src/app/fixtures/limiter-at-module-app.ts', '--explore', 'exhaustive', '--faults', 'concurrency,loseResponse', '--found', tmp('rs-diverged-')]);
    expect(r.code, r.out + r.err).toBe(0);
    expect(r.out).toMatch(/module state: the search's runs went another way on one schedule \(decision #\d+ offered \[[^\]]+\] in an earlier run and \[[^\]]+\] in this one\): state kept at module level .*searching again with one module load per simulated process/);
    expect(r.out).toMatch(/│ ✓ │ limiter-at-module \/ one key per operation │ \d+ \(all\) │ per process, every run │ holds/);
    // The command's header once, not again for the second search.
    expect(r.out.match(/^retrysim check --app/gm)).toHaveLength(1);
    expect(r.err).not.toMatch(/retrysim check:|internal error/);
    // The environment is as it was: a later command in the same process loads modules once again.
    expect(process.env.RETRYSIM_APP_PER_PROCESS).toBeUndefined();
  }, 120_000);

  it('check --app --explore exhaustive on a module-level idempotency store: searched per process it fails, and the file replays (exit 1; --json one object)', async () => {
    const found = tmp('rs-diverged-');
    const r = await runMain(['check', '--app', 'src/app/fixtures/module-store-app.ts', '--explore', 'exhaustive', '--found', found, '--json']);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; moduleLoads: string; violations: string[]; counterexample: string };
    expect(j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process', violations: ['exactly-one'] });
    expect(r.err).toContain('searching again with one module load per simulated process');
    const replay = await runMain(['replay', j.counterexample]);
    expect(replay.code, replay.out + replay.err).toBe(0);
    expect(replay.out).toContain('expect: met');
  }, 300_000);
});
