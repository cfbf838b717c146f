// A hosted app's module-level state that carries over from one simulated
// run to the next. Found from the packed tarball with express-rate-limit,
// whose README creates `rateLimit()` at the top of the file: its
// MemoryStore's hits piled up over the runs (every run starts at the same
// virtual instant, so its window never passed), and after ~100 requests
// every request of every later run was answered 429 before the app ran.
// An Express app whose bug the campaign finds at run 579 with the limiter
// built inside app() held 3,000 runs with it at module level (exit 0),
// and a buggy one stopped with "does not fail the same way twice" (exit 2,
// no verdict) when its shrinking ran into the limit. The fixtures
// reproduce the MemoryStore's mechanism (fixtures/rate-limit-lib.ts).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fc, replayable, runServiceCase, serviceCases } from '../vitest.js';
import { appService } from './define.js';
import limiterAtModule from './fixtures/limiter-at-module-app.js';
import limiterInApp from './fixtures/limiter-in-app-app.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const bin = fileURLToPath(new URL('../../bin/retrysim.js', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));
const found = fileURLToPath(new URL('../../.retrysim/test-carried-state', import.meta.url));
const check = (name: string, ...more: string[]) => {
  const p = spawnSync(process.execPath, [bin, 'check', '--app', fixture(name), '--runs', '30', ...more, '--json', '--found', found], { encoding: 'utf8', timeout: 180_000, env: { ...process.env, RETRYSIM_APP_PER_PROCESS: '' } });
  return { status: p.status, stderr: p.stderr, j: p.stdout === '' ? undefined : (JSON.parse(p.stdout) as { verdict: string; why: string[]; moduleLoads: string; violations?: string[] }) };
};

describe('module-level state that changes later runs is not a verdict about them', () => {
  it('a correct app behind a module-level rate limiter: inconclusive (exit 4), naming the run whose answers changed and both ways out, not holds', () => {
    const p = check('limiter-at-module-app');
    expect(p.status, p.stderr).toBe(4);
    expect(p.j!.verdict).toBe('inconclusive');
    expect(p.j!.why[0]).toMatch(/^inconclusive: app 'limiter-at-module' keeps state at module level that changed its answers from one simulated run to the next: run 1 was answered .*, and run again after the campaign .*429.*; create it inside app\(\), as each real process does, or run the campaign with one module load per process: RETRYSIM_APP_PER_PROCESS=1 retrysim check --app \S+limiter-at-module-app\.ts --seed 1 --runs 30$/);
  }, 180_000);

  it('--explore pct: the same check, the first runs run again on their PCT schedules', () => {
    const p = check('limiter-at-module-app', '--explore', 'pct');
    expect(p.status, p.stderr).toBe(4);
    expect(p.j!.why[0]).toMatch(/^inconclusive: app 'limiter-at-module' keeps state at module level that changed its answers/);
  }, 180_000);

  it('sharded (--shard 1/2, 2/2, then merge): the same inconclusive verdict and line, exit 4 — it held when sharded until 2026-12', () => {
    const dir = tmp('rs-carried-shards-');
    for (const i of [1, 2]) {
      const p = check('limiter-at-module-app', '--shard', `${i}/2`, '--out', join(dir, `s${i}.json`));
      expect(p.status, p.stderr).toBe(0); // a shard that ran exits 0: merge gives the verdict
    }
    const m = spawnSync(process.execPath, [bin, 'merge', join(dir, 's1.json'), join(dir, 's2.json'), '--json'], { encoding: 'utf8' });
    expect(m.status, m.stderr).toBe(4);
    const j = JSON.parse(m.stdout) as { verdict: string; why: string[] };
    expect(j.verdict).toBe('inconclusive');
    expect(j.why[0]).toMatch(/^inconclusive: app 'limiter-at-module' keeps state at module level that changed its answers from one simulated run to the next: run 1 was answered .*429.*RETRYSIM_APP_PER_PROCESS=1 retrysim check --app \S+limiter-at-module-app\.ts --seed 1 --runs 30$/);
  }, 180_000);

  it('the same limiter created inside app(), once per process: holds (exit 0), the first runs answer as they did', () => {
    const p = check('limiter-in-app-app');
    expect(p.status, p.stderr).toBe(0);
    expect(p.j!.verdict).toBe('holds');
  }, 180_000);

  it('a bug whose failing run passes when shrinking re-runs it (the limit reached meanwhile): the per-process verdict, not exit 2', () => {
    const p = check('limiter-at-module-key-reuse-app');
    expect(p.status, p.stderr).toBe(1);
    expect(p.j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process' });
    expect(p.j!.violations).toContain('key-reuse');
    expect(p.j!.why[0]).toMatch(/^app 'limiter-key-reuse' keeps state at module level, which carried over from one simulated run to the next .* it fails key-reuse \(run \d+ of 30\)/);
  }, 180_000);

  it('an answer cache at module level (a Lambda-style module) that answers a later run from an earlier one: inconclusive (exit 4) with the per-process command, not exit 2', () => {
    // Until 2026-12: "its counterexample did not reproduce when replayed in a fresh process", exit 2 — as if the app were malformed.
    const p = check('module-answer-cache-app');
    expect(p.status, p.stderr).toBe(4);
    expect(p.j!.verdict).toBe('inconclusive');
    expect(p.j!.why[0]).toMatch(/^inconclusive: app 'module-answer-cache' keeps state at module level that carried over from one simulated run to the next: run \d+ failed [\w-, ]+ only after the runs before it \(its counterexample did not reproduce in a fresh process\), and with one module load per simulated process, as real processes load them, the first 30 runs hold; a verdict needs every run loaded that way: RETRYSIM_APP_PER_PROCESS=1 retrysim check --app \S+module-answer-cache-app\.ts --seed 1 --runs 30$/);
  }, 180_000);

  it('a counter at module level whose 40th request misbehaves: the failing run passes when run again, its first runs hold per process: inconclusive (exit 4), not exit 2', () => {
    // Until 2026-12: "does not fail the same way twice on the same run", exit 2.
    const p = check('module-counter-app');
    expect(p.status, p.stderr).toBe(4);
    expect(p.j!.why[0]).toMatch(/^inconclusive: app 'module-counter' keeps state at module level that carried over from one simulated run to the next: run \d+ failed exactly-one only after the runs before it \(it passed when run again\), .* the first 30 runs hold; a verdict needs every run loaded that way: RETRYSIM_APP_PER_PROCESS=1 retrysim check --app \S+module-counter-app\.ts --seed 1 --runs 30$/);
  }, 180_000);

  it('the vitest helper: a passing property over the module-level limiter app is inconclusive, not passed; created in app(), it passes', async () => {
    const property = async (app: typeof limiterAtModule, file: string) => {
      const service = appService(app);
      const module = new URL(`./fixtures/${file}.ts`, import.meta.url);
      const prop = fc.asyncProperty(serviceCases(service, { module }), async (c) => (await runServiceCase(service, c)).violations.length === 0);
      await fc.assert(prop, { ...replayable(service, { module, foundDir: found }), numRuns: 30, seed: 1 });
    };
    await expect(property(limiterAtModule, 'limiter-at-module-app')).rejects.toThrow(/^retrysim: inconclusive, not passed: app 'limiter-at-module' keeps state at module level that changed its answers from one simulated run to the next: run 1 was answered .* RETRYSIM_APP_PER_PROCESS=1 retrysim check --app \S+limiter-at-module-app\.ts$/);
    await property(limiterInApp, 'limiter-in-app-app');
  }, 180_000);
});
