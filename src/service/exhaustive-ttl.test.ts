// `--explore exhaustive` pauses a request for two leases at each step while
// the client retries through it (src/service/small.ts): a key that expires
// near the lease is taken over under its holder. Until 2026-12 the small
// scenarios paused 2.5 s at most, and a 5 s key TTL held "(all)" where the
// random campaign fails it at run 1.
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const fixture = 'src/service/fixtures/ttl-near-lease.ts';

describe('exhaustive search of a service whose key expires 5 s after its claim', () => {
  it('fails exactly-one, minimal (one fault, no preemption), and the file replays', async () => {
    const found = tmp('rs-exh-ttl-');
    const r = await runMain(['check', '--service', fixture, '--explore', 'exhaustive', '--found', found, '--json']);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; violations: string[]; counterexample: string; shrunkSize: { faults: number; preemptions: number } };
    expect(j).toMatchObject({ verdict: 'fails', violations: ['exactly-one'] });
    expect(j.shrunkSize).toMatchObject({ faults: 1, preemptions: 0 });
    expect((await runMain(['replay', '--service', fixture, j.counterexample])).code).toBe(0);
  }, 120_000);
});
