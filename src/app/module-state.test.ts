// What an app's modules keep at module level — a Map in the app's own file,
// a library's default in-memory store (express-idempotency keeps its
// service in one) — is one per Node process. Loaded once for a campaign,
// the module was shared by every simulated instance and outlived every
// simulated restart, so an app whose idempotency store lived there held,
// while two replicas (or a restarted process) each with their own store
// order twice. Found from the packed tarball: Powertools idempotency over
// an in-memory cache client at module level held 300 of 300 runs; loaded
// once per process it fails at run 1. `check --app` now runs the first runs
// of a holding verdict again with one module load per simulated process
// (src/app/per-process.ts) and says so when the verdict changes.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import { loadService } from '../service/load.js';

const bin = fileURLToPath(new URL('../../bin/retrysim.js', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/module-store-app.ts', import.meta.url));
const mapApp = fileURLToPath(new URL('./fixtures/module-map-app.ts', import.meta.url));
const claimApp = fileURLToPath(new URL('../../examples/app-plain-http/app-claim.ts', import.meta.url));
const check = (path: string, runs: number) => spawnSync(process.execPath, [bin, 'check', '--app', path, '--runs', String(runs), '--faults', 'instances,kill,loseResponse', '--json', '--found', fileURLToPath(new URL('../../.retrysim/test-module-state', import.meta.url))], { encoding: 'utf8', timeout: 120_000, env: { ...process.env, RETRYSIM_APP_PER_PROCESS: '' } });

describe('module-level state of a hosted app is one per simulated process', () => {
  it('loaded once, the library store at module level is shared by both instances and survives restarts: it holds', async () => {
    const def = await loadService(fixture, { perProcess: false });
    const r = await runServiceCampaign({ def, module: fixture, runs: 30, seed: 1, faults: ['instances', 'kill'] });
    expect(r.verdict).toBe('holds');
  }, 60_000);

  it('loaded once per simulated process, as real processes load it: a retry on the other instance orders again', async () => {
    const def = await loadService(fixture, { perProcess: true });
    const r = await runServiceCampaign({ def, module: fixture, runs: 30, seed: 1, faults: ['instances', 'kill'] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 60_000);

  it('check --app: a verdict that holds only with shared modules fails, in one line, exit 1; its counterexample replays per process', () => {
    const p = check(fixture, 30);
    expect(p.status, p.stderr).toBe(1);
    const j = JSON.parse(p.stdout) as { verdict: string; why: string[]; moduleLoads: string; replay: string; violations: string[] };
    expect(j.verdict).toBe('fails');
    expect(j.moduleLoads).toBe('per-process');
    expect(j.violations).toContain('exactly-one');
    expect(j.why[0]).toMatch(/^app 'module-store-app' holds only because its simulated instances share module-level state: .* it fails exactly-one \(run \d+ of 30\)/);
    // The file says how its modules load (service.moduleLoads): the replay line is the whole command.
    expect(j.replay).toMatch(/^retrysim replay --app /);
  }, 120_000);

  it('check --app: a Map at module level that carries over between runs gives the verdict of separate processes, not exit 2', () => {
    // Until 2026-12: exit 2, "its counterexample did not reproduce when replayed in a fresh process", and no verdict.
    const p = check(mapApp, 30);
    expect(p.status, p.stderr).toBe(1);
    const j = JSON.parse(p.stdout) as { verdict: string; why: string[]; moduleLoads: string; violations: string[] };
    expect(j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process' });
    expect(j.violations).toContain('exactly-one');
    expect(j.why[0]).toMatch(/^app 'module-map-app' keeps state at module level, which carried over from one simulated run to the next .* it fails exactly-one \(run \d+ of 30\)/);
  }, 120_000);

  it('check --app: an app that keeps its state in the store holds either way (exit 0, modules loaded once)', () => {
    const p = check(claimApp, 30);
    expect(p.status, p.stderr).toBe(0);
    const j = JSON.parse(p.stdout) as { verdict: string; moduleLoads: string };
    expect(j).toMatchObject({ verdict: 'holds', moduleLoads: 'once' });
    expect(p.stderr).toMatch(/module state: the same verdict with one load per process \(30 runs\)/);
  }, 120_000);
  it('RETRYSIM_APP_PER_PROCESS other than 1 or 0 is one line, exit 2 (it silently loaded the app once)', () => {
    const r = spawnSync(process.execPath, [bin, 'check', '--app', claimApp, '--runs', '5'], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, RETRYSIM_APP_PER_PROCESS: 'yes' } });
    expect(r.status, r.stdout + r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim()).toBe("retrysim check: RETRYSIM_APP_PER_PROCESS must be 1 (one module load per simulated process) or 0, got 'yes'");
  });
});
