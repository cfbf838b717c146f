import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const APP = 'src/app/fixtures/crowd-app.ts';
const FAULTS = 'concurrency,threeWorkers,longSpans';

// An exhaustive search that holds is followed by the module-state probe, which
// runs the random campaign's first runs with one module load per process. Those
// runs are not the search's: a failure there that the modules loaded once show
// too is the app's own, and must not be blamed on module-level state (until
// 2026-12 the line said "holds only because its simulated instances share
// module-level state" of an app that keeps nothing outside its store).
describe("the module probe after an exhaustive search: a failure the search did not reach is the app's", () => {
  it('fails (exit 1) with a line naming the probe\'s runs, not module state; the random campaign finds the same bug', async () => {
    // Small scenarios with two workers hold; the random campaign's three workers, one of them stalled for minutes, fail at run 17.
    const r = await runMain(['check', '--app', APP, '--explore', 'exhaustive', '--faults', FAULTS, '--json', '--found', tmp('rs-probe-ex-')]);
    expect(r.code).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; why: string[]; moduleProbe: { verdict: string } };
    expect(j.verdict).toBe('fails');
    expect(j.moduleProbe.verdict).toBe('fails');
    expect(j.why[0]).toMatch(/^app 'crowd-app' fails: the module-state probe \(the random campaign's runs 1–50 .*\) found a failure the exhaustive search's small scenarios did not reach: exactly-one .*so it is not module-level state/);
    expect(j.why.join('\n')).not.toMatch(/share module-level state/);
    const random = await runMain(['check', '--app', APP, '--runs', '200', '--faults', FAULTS, '--json', '--found', tmp('rs-probe-rnd-')]);
    expect(random.code).toBe(1);
    expect(JSON.parse(random.out)).toMatchObject({ verdict: 'fails', firstFailureRun: 17, moduleProbe: null });
  });
});
