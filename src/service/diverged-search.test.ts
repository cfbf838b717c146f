// An exhaustive search that runs one schedule twice and sees the runs go
// different ways is the app's module-level state (a limiter whose window
// never passes), not a bug in retrysim: one line naming it, exit 2. Until
// 2026-12: "internal error: exhaustive exploration diverged … offered 2
// candidates there, this one offered 2 … (a bug in retrysim)", exit 1.
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('an exhaustive search over an app with module-level state', () => {
  it('check --app --explore exhaustive: one line naming the state and the decision that differed, exit 2', async () => {
    const app = 'src/app/fixtures/limiter-at-module-app.ts';
    const r = await runMain(['check', '--app', app, '--explore', 'exhaustive', '--found', tmp('rs-diverged-')]);
    expect(r.code, r.out + r.err).toBe(2);
    const lines = r.err.split('\n').filter((l) => l.startsWith('retrysim check:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^retrysim check: app 'limiter-at-module': does not run the same way twice on the same schedule \(an exhaustive search's decision #\d+ offered \[[^\]]+\] in an earlier run and \[[^\]]+\] in this one\): .* state kept at module level .*RETRYSIM_APP_PER_PROCESS=1 before the same command$/);
    expect(r.err).not.toContain('internal error');
  }, 120_000);
});
