// A module's top level draws its randomness from a fixed stream while it
// loads, as it reads the simulation's epoch for its clock: a value made once
// at load (a client's instance key, a process id) is the same in a campaign's
// process and in the fresh process that replays its counterexample. Until
// 2026-12 the draws were the machine's: a client with one key per instance
// failed key-reuse in the campaign, its file sent another key in the replay,
// and check --client said "did not reproduce in a fresh process" (exit 2).
import { describe, expect, it } from 'vitest';
import { runCliProcess, runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { loadingAt } from '../sim/load-clock.js';

const tmp = tempDirs();
const MODULE = 'src/client/fixtures/instance-key.ts';

describe('randomness a module draws while it loads', () => {
  it('is the same stream on every load, and a Math.random taken at load follows the code running later', async () => {
    const draw = () => loadingAt(0, async () => ({ r: [Math.random(), Math.random()], u: crypto.randomUUID(), bound: Math.random })); // real-time: allowed (test: the load's stream)
    const a = await draw();
    const b = await draw();
    expect(b.r).toEqual(a.r);
    expect(b.u).toBe(a.u);
    // Outside the load the machine's stream again, through the copy too.
    const outside = [Math.random(), a.bound()]; // real-time: allowed (test: outside every load)
    expect(outside).not.toContain(a.r[0]);
    expect(outside).not.toContain(a.r[1]);
  });

  it('a client that keys every operation with one instance key fails key-reuse, and its file replays to the same keys in processes of their own', async () => {
    const r = await runMain(['check', '--client', MODULE, '--runs', '50', '--json', '--found', tmp('rs-instance-key-')]);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { violations: string[]; counterexample: string };
    expect(j.violations).toContain('key-reuse');
    const replays = [0, 1].map(() => runCliProcess(['replay', '--client', MODULE, j.counterexample, '--trace']));
    for (const x of replays) expect(x.status, x.stderr).toBe(0);
    const keys = (out: string) => [...out.matchAll(/key=(\S+)/g)].map((m) => m[1]);
    expect(new Set(keys(replays[0]!.stdout)).size).toBe(1);
    expect(keys(replays[1]!.stdout)).toEqual(keys(replays[0]!.stdout));
  }, 120_000);
});
