// Every path that judges an app runs the per-process module probe that
// `check --app` runs (src/app/module-probe.ts): until 2026-12 `--shard` +
// `merge` and the vitest helper held the module-store app that `check --app`
// fails, and a sharded app whose module-level state carried over between
// runs stopped with exit 2 where check gives its verdict. The replay side
// (service.moduleLoads) is src/app/module-loads.test.ts.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliProcess, runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { fc, replayable, runServiceCase, serviceCases } from '../vitest.js';
import { appService } from './define.js';
import storeApp from './fixtures/module-store-app.js';
import mapApp from './fixtures/module-map-app.js';
import claimDescriptor from '../../examples/app-plain-http/app-claim.js';

const tmp = tempDirs();
const fixture = 'src/app/fixtures/module-store-app.ts';
const claimApp = 'examples/app-plain-http/app-claim.ts';
const FAULTS = ['--faults', 'instances,kill,loseResponse'];
/** The CLI in a process of its own, as a user runs it: RETRYSIM_APP_PER_PROCESS unset. */
const cli = runCliProcess;

/** `check` or `merge` --json, parsed, with what differs between two runs of one campaign (wall time, where files went) taken out. */
async function json(args: string[]): Promise<{ code: number; j: Record<string, unknown>; err: string }> {
  const r = await runMain([...args, '--json']);
  const j = JSON.parse(r.out) as Record<string, unknown>;
  delete j.firstFailureMs;
  for (const k of ['counterexample', 'replay'] as const) if (typeof j[k] === 'string') j[k] = basename(j[k] as string);
  return { code: r.code, j, err: r.err };
}

describe('every path that judges an app runs the per-process probe', () => {
  it('check --app --shard + merge: the module-store app fails as check says, the same --json (moduleLoads, moduleProbe, why)', async () => {
    const dir = tmp('rs-modloads-shard-');
    const args = ['check', '--app', fixture, '--runs', '30', ...FAULTS];
    const files: string[] = [];
    for (let i = 1; i <= 2; i++) {
      const out = join(dir, `shard-${i}.json`);
      const r = await runMain([...args, '--shard', `${i}/2`, '--out', out, '--found', join(dir, `found-${i}`)]);
      expect(r.code, r.err).toBe(0);
      files.push(out);
    }
    const shard1 = JSON.parse(readFileSync(files[0]!, 'utf8')) as { moduleLoads: string; moduleProbe?: { runs: number; result: { verdict: string } } };
    expect(shard1).toMatchObject({ moduleLoads: 'once', moduleProbe: { runs: 30, result: { verdict: 'fails' } } });
    expect((JSON.parse(readFileSync(files[1]!, 'utf8')) as { moduleProbe?: unknown }).moduleProbe).toBeUndefined();
    const merged = await json(['merge', files[1]!, files[0]!]);
    const whole = await json([...args, '--found', join(dir, 'whole')]);
    expect(merged.code).toBe(1);
    expect(merged.j).toEqual(whole.j);
    expect(merged.j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process', moduleProbe: { runs: 30, verdict: 'fails' } });
    expect((merged.j.why as string[])[0]).toMatch(/^app 'module-store-app' holds only because its simulated instances share module-level state: .* \(run \d+ of 30\)/);
    // The merged counterexample is shard 1's, and replays bare.
    const cx = readdirSync(join(dir, 'found-1'))[0]!;
    expect(cli(['replay', '--app', fixture, join(dir, 'found-1', cx)]).status).toBe(0);
    const text = await runMain(['merge', ...files]);
    expect(text.out).toMatch(/│ ✗ │ module-store-app \/ one key per operation │ \d+ +│ per process, runs 1–30 │ fails/);
  }, 120_000);

  it('check --app --shard + merge: a first failure that needed state earlier runs left gives the per-process verdict, as check does (not exit 2)', async () => {
    const dir = tmp('rs-modloads-shard-');
    // 70 runs: shard 2 owns runs 65-70 and fails there too; the probe's 10 runs reach its failure (run 6).
    const args = ['check', '--app', 'src/app/fixtures/module-map-app.ts', '--runs', '70', '--module-probe-runs', '10', ...FAULTS];
    const files: string[] = [];
    for (let i = 1; i <= 2; i++) {
      const out = join(dir, `shard-${i}.json`);
      const r = await runMain([...args, '--shard', `${i}/2`, '--out', out, '--found', join(dir, `found-${i}`)]);
      expect(r.code, r.err).toBe(0);
      files.push(out);
    }
    expect((JSON.parse(readFileSync(files[1]!, 'utf8')) as { notReproduced?: string }).notReproduced).toMatch(/^expect not met/);
    const merged = await json(['merge', files[1]!, files[0]!]);
    const whole = await json([...args, '--found', join(dir, 'whole')]);
    expect(merged.code, merged.err).toBe(1);
    expect(merged.j).toEqual(whole.j);
    expect(merged.j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process' });
    expect((merged.j.why as string[])[0]).toMatch(/^app 'module-map-app' keeps state at module level, which carried over from one simulated run to the next/);
  }, 120_000);

  it('merge refuses an app shard 1 that held without a probe (an older file): one line, exit 2', async () => {
    const dir = tmp('rs-modloads-shard-');
    const args = ['check', '--app', claimApp, '--runs', '20', ...FAULTS];
    const files: string[] = [];
    for (let i = 1; i <= 2; i++) {
      const out = join(dir, `shard-${i}.json`);
      expect((await runMain([...args, '--shard', `${i}/2`, '--out', out, '--found', join(dir, 'found')])).code).toBe(0);
      files.push(out);
    }
    const merged = await json(['merge', ...files]);
    const whole = await json([...args, '--found', join(dir, 'whole')]);
    expect(merged.code).toBe(0);
    expect(merged.j).toEqual(whole.j);
    expect(merged.j).toMatchObject({ verdict: 'holds', moduleLoads: 'once', moduleProbe: { runs: 20, verdict: 'holds' } });
    const old = JSON.parse(readFileSync(files[0]!, 'utf8')) as Record<string, unknown>;
    delete old.moduleProbe;
    writeFileSync(files[0]!, JSON.stringify(old));
    const r = await runMain(['merge', ...files]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^retrysim merge: .*shard-1\.json \(shard 1\/2\): an app's shard 1 without a failure carries no per-process module probe/);
    expect(r.err.split('\n')).toHaveLength(1);
  }, 120_000);

  it('the vitest helper: a property over the module-store app that passes with shared modules fails with check\'s line and a counterexample that replays', async () => {
    const found = tmp('rs-modloads-vitest-');
    const service = appService(storeApp);
    const module = new URL('./fixtures/module-store-app.ts', import.meta.url);
    const prop = fc.asyncProperty(serviceCases(service, { module, faults: ['instances', 'kill', 'loseResponse'] }), async (c) => (await runServiceCase(service, c)).violations.length === 0);
    let msg = '';
    try {
      await fc.assert(prop, { ...replayable(service, { module, foundDir: found }), numRuns: 30, seed: 1 });
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/^Property passed 30 tests with the app's modules loaded once \(seed 1\), and fails with one load per simulated process/);
    expect(msg).toMatch(/retrysim: app 'module-store-app' holds only because its simulated instances share module-level state: .* it fails exactly-one \(run \d+ of 30\)/);
    const file = readdirSync(found)[0]!;
    expect(JSON.parse(readFileSync(join(found, file), 'utf8'))).toMatchObject({ service: { moduleLoads: 'per-process' }, description: expect.stringMatching(/^Found by a vitest property/) });
    expect(cli(['replay', '--app', fixture, join(found, file)]).status).toBe(0);
    // An app that keeps its state in the store passes the probe too: the property passes.
    const claim = appService(claimDescriptor);
    const claimModule = new URL('../../examples/app-plain-http/app-claim.ts', import.meta.url);
    const ok = fc.asyncProperty(serviceCases(claim, { module: claimModule, faults: ['instances', 'kill', 'loseResponse'] }), async (c) => (await runServiceCase(claim, c)).violations.length === 0);
    await fc.assert(ok, { ...replayable(claim, { module: claimModule, foundDir: found }), numRuns: 20, seed: 1 });
  }, 120_000);

  it('the vitest helper: a property that fails on state an earlier run left (the Map app) gives check\'s per-process failure and a file that replays, not only "did not reproduce"', async () => {
    const found = tmp('rs-modloads-vitest-');
    const service = appService(mapApp);
    const module = new URL('./fixtures/module-map-app.ts', import.meta.url);
    const prop = fc.asyncProperty(serviceCases(service, { module, faults: ['instances', 'kill', 'loseResponse'] }), async (c) => (await runServiceCase(service, c)).violations.length === 0);
    let msg = '';
    try {
      await fc.assert(prop, { ...replayable(service, { module, foundDir: found }), numRuns: 100, seed: 1 });
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/^Property failed with the app's modules loaded once \(seed 1\) on a case that state kept from earlier runs decided \(it did not reproduce in a fresh process\), and fails with one load per simulated process/);
    expect(msg).toMatch(/retrysim: app 'module-map-app' keeps state at module level, which carried over from one simulated run to the next while its modules were loaded once: .* it fails exactly-one \(run \d+ of 50\)/);
    const file = readdirSync(found)[0]!;
    expect(msg).toContain(`written to ${join(found, file)}`);
    expect(JSON.parse(readFileSync(join(found, file), 'utf8'))).toMatchObject({ service: { moduleLoads: 'per-process' } });
    expect(cli(['replay', '--app', 'src/app/fixtures/module-map-app.ts', join(found, file)]).status).toBe(0);
  }, 120_000);

  it('--expect fails on the module-store app: its per-process failure is the verdict asked for (ok, exit 0, no reasons), and the line still says why', async () => {
    const dir = tmp('rs-modloads-');
    const { code, j } = await json(['check', '--app', fixture, '--runs', '100', ...FAULTS, '--expect', 'fails', '--found', dir]);
    expect({ code, verdict: j.verdict, ok: j.ok, why: j.why, moduleLoads: j.moduleLoads }).toEqual({ code: 0, verdict: 'fails', ok: true, why: [], moduleLoads: 'per-process' });
    const text = await runMain(['check', '--app', fixture, '--runs', '100', ...FAULTS, '--expect', 'fails', '--found', dir]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/app 'module-store-app' .*module level/);
  }, 120_000);

  it('--module-probe-runs N: the probe covers the first N runs and the table says so; fewer than the first failure, the app does not fail', async () => {
    const few = await runMain(['check', '--app', fixture, '--runs', '30', ...FAULTS, '--module-probe-runs', '1', '--found', tmp('rs-modloads-')]);
    // Run 1 does not fail per process (the default's probe fails later): the probe's cell says what it covered. The
    // verdict is not "holds" (exit 0, until 2026-12): the claims the module-level store kept from the first runs
    // answered the later runs 409, and run 1, run again at the end, is answered otherwise (carried-state.ts).
    expect(few.code, few.err).toBe(4);
    expect(few.out).toMatch(/│ \? │ module-store-app \/ one key per operation │ 30 +│ once; runs 1–1 per process: holds │ inconclusive/);
    expect(few.out).toMatch(/inconclusive: app 'module-store-app' keeps state at module level that changed its answers from one simulated run to the next: run 1 was answered/);
    const bad = await runMain(['check', '--app', fixture, '--runs', '5', '--module-probe-runs', '0']);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe('retrysim check: --module-probe-runs must be an integer >= 1, got \'0\'');
    const svc = await runMain(['check', '--service', 'examples/payments-atomic/service.ts', '--runs', '5', '--module-probe-runs', '3']);
    expect(svc.code).toBe(2);
    expect(svc.err).toMatch(/--module-probe-runs is for an app \(--app\)/);
  }, 120_000);
});
