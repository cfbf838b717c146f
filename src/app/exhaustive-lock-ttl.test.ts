// `--explore exhaustive` pauses a request for two leases at each step and
// lets its client, patient for 1.1 leases, retry once after the lease is
// over (src/service/small.ts): a SET NX EX lock whose holder writes without
// checking the lock is still its own is taken over and makes a second order.
// Until 2026-12 the only pause past the lease had a client patient for 0.9
// of one, whose retries all went out within a short backoff of its timeout,
// before a 5 s lock expired: the search held 82,911 schedules, all, with
// every fault, where the random campaign fails at run 9.
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const APP = 'src/app/fixtures/lock-ttl-app.ts';

describe('exhaustive search of an app whose 5 s lock is taken over while its holder is paused', () => {
  it('fails exactly-one: one operation, one pause, two attempts, no preemption; the file replays', async () => {
    const r = await runMain(['check', '--app', APP, '--explore', 'exhaustive', '--faults', 'pause', '--json', '--found', tmp('rs-exh-lock-')]);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; violations: string[]; counterexample: string; shrunkSize: Record<string, number> };
    expect(j).toMatchObject({ verdict: 'fails', violations: ['exactly-one'] });
    expect(j.shrunkSize).toMatchObject({ operations: 1, workers: 1, faults: 1, attempts: 2, preemptions: 0 });
    const replay = await runMain(['replay', '--app', APP, j.counterexample, '--trace']);
    expect(replay.code, replay.err).toBe(0);
    // The retry claims the lock after its 5 s expiry while the first request still sleeps, then the first writes too.
    expect(replay.out).toMatch(/paused 10000 ms/);
    expect(replay.out).toMatch(/call-1#2 t=55\d\d\.\d→\d+\.\d ms key=run-1:call-1 HTTP 201/);
  });
});
