// A client that binds crypto.randomUUID when its module loads draws its keys
// from the run's seed like one that calls the global: its counterexample
// replays to the same trace, twice, in processes of their own. Until 2026-12
// the bound copy was Node's own, and each replay sent other keys (exit 0, a
// different trace hash each time).
import { describe, expect, it } from 'vitest';
import { runCliProcess, runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const MODULE = 'src/client/fixtures/bound-uuid.ts';

describe('a retry client whose uuid function was bound at module load', () => {
  it('fails stable-key, and its file replays to one trace and the same keys, twice', async () => {
    const r = await runMain(['check', '--client', MODULE, '--runs', '50', '--json', '--found', tmp('rs-bound-uuid-')]);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { violations: string[]; counterexample: string };
    expect(j.violations).toEqual(['stable-key']);
    const replays = [0, 1].map(() => runCliProcess(['replay', '--client', MODULE, j.counterexample, '--trace']));
    for (const x of replays) expect(x.status, x.stderr).toBe(0);
    const keys = (out: string) => [...out.matchAll(/key=(\S+)/g)].map((m) => m[1]);
    const hash = (out: string) => /trace ([0-9a-f]{64})/.exec(out)?.[1];
    expect(keys(replays[0]!.stdout).length).toBeGreaterThan(1);
    expect(keys(replays[1]!.stdout)).toEqual(keys(replays[0]!.stdout));
    expect(hash(replays[1]!.stdout)).toBe(hash(replays[0]!.stdout));
  }, 120_000);
});
