// A request stuck on a promise another request of its process left
// unsettled when its handler threw (an in-process single flight whose first
// request hit a crash point): the stopped run's line says that first, with
// the request, before the generic list (real I/O, …) it used to give alone.
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

describe('a run stopped on a promise a failed request left unsettled', () => {
  it('names the request that threw and the single-flight fix, in check and in the replay of the stopped file', async () => {
    const found = tmp('rs-stuck-');
    const r = await runMain(['check', '--service', 'src/service/fixtures/single-flight-leader-throws.ts', '--runs', '300', '--found', found]);
    expect(r.code, r.out + r.err).toBe(2);
    const line = r.err.split('\n').find((l) => l.startsWith('retrysim check:'))!;
    expect(line).toMatch(/never answered requests? s0\/op1\.w\d#\d(, s0\/op1\.w\d#\d)*: most likely (it awaits|they await) a promise that s0\/op1\.w\d#\d, a request of its process, left unsettled when its handler ended by a throw \(crash_mid_request fault fired \(mid-work\)\) — an in-process single flight whose first request fails must settle what the others await \(reject or resolve it in a finally\); else the handler (awaited something outside the simulation|waits on something nothing in the simulation settles)/);
    const file = /it stopped at run \d+: (\S+\.json)/.exec(r.err)?.[1];
    expect(file, r.err).toBeDefined();
    const again = await runMain(['replay', '--service', 'src/service/fixtures/single-flight-leader-throws.ts', file!]);
    expect(again.out + again.err).toMatch(/most likely (it awaits|they await) a promise that s0\/op1\.w/);
  }, 120_000);
});
