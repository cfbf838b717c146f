// What a retry client keeps at module level — a counter its keys come from,
// a breaker, a retry budget — is one per client process, and starts again in
// every new or restarted one. Loaded once for a campaign, the module was
// shared by every call of every run: a key `order-${++n}` never repeated
// there, so a client whose two processes both send `order-1` for two
// different orders (the second answered with the first's result, or refused:
// an order lost) held 300 of 300 runs. `check --client` now runs the first
// runs of a holding verdict again with each call (each simulated worker) from
// its own copy of the module (src/app/per-process.ts), as the apps' check does.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freshClientLoader, loadClient } from './load.js';
import { runClientCampaign } from './campaign.js';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const COUNTER = 'src/client/fixtures/module-counter.ts';
const CURRENT = 'src/client/fixtures/module-current-key.ts';
const campaign = async (path: string, name: string | undefined, perProcess: boolean) => {
  const client = await loadClient(path, name);
  return runClientCampaign({ client, module: path, runs: 30, seed: 1, ...(perProcess ? { perProcess: freshClientLoader(path, client.name) } : {}) });
};
afterEach(() => vi.unstubAllEnvs());

describe('module-level state of a retry client is one per simulated client process', () => {
  it('loaded once, a key from a counter at module level never repeats: it holds', async () => {
    expect((await campaign(COUNTER, 'counter-key', false)).verdict).toBe('holds');
  }, 60_000);

  it('loaded once per call, as two client processes load it: both send order-1 for two operations, key-reuse, shrunk to two operations and no fault', async () => {
    const r = await campaign(COUNTER, 'counter-key', true);
    expect(r.verdict).toBe('fails');
    const cx = r.counterexample!;
    expect([...new Set(cx.violations.map((v) => v.invariant))]).toEqual(['key-reuse']);
    expect(cx.violations[0]!.detail).toMatch(/^op2\.w0 sent Idempotency-Key order-1 at t=\d+ ms, the key op1\.w0 sent for another operation \(op1\)/);
    expect(cx.size).toMatchObject({ operations: 2, workers: 2, faults: 0, preemptions: 0 });
    expect(cx.notMinimal).toEqual([]);
  }, 60_000);

  it('a CommonJS client (module.exports, through require) gets its own copy per call too', async () => {
    const cjs = 'src/client/fixtures/module-counter-cjs.cjs';
    expect((await campaign(cjs, undefined, false)).verdict).toBe('holds');
    const r = await campaign(cjs, undefined, true);
    expect(r.verdict).toBe('fails');
    expect([...new Set(r.counterexample!.violations.map((v) => v.invariant))]).toEqual(['key-reuse']);
  }, 60_000);

  it('a key per call (crypto.randomUUID()), or a counter that only numbers requests for logs, holds loaded per call too', async () => {
    expect((await campaign(COUNTER, 'uuid-key', true)).verdict).toBe('holds');
    expect((await campaign(COUNTER, 'logged-counter', true)).verdict).toBe('holds');
  }, 60_000);

  it('why the campaign still loads the module once: two calls in one process that mix their keys through module state fail only there', async () => {
    const once = await campaign(CURRENT, undefined, false);
    expect(once.verdict).toBe('fails');
    expect(once.counterexample!.violations.map((v) => v.invariant)).toContain('stable-key');
    // Each call in a process of its own has its own `current`: loading per call alone would have called it safe.
    expect((await campaign(CURRENT, undefined, true)).verdict).toBe('holds');
  }, 60_000);

  it('check --client: a verdict that holds only with one shared load fails, in one line, exit 1; its counterexample replays with RETRYSIM_APP_PER_PROCESS=1 (exit 0), not without (exit 1)', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    const found = tmp('rs-client-module-state-');
    const r = await runMain(['check', '--client', COUNTER, '--runs', '30', '--found', found, '--json']);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; ok: boolean; why: string[]; moduleLoads: string; violations: string[]; counterexample: string; replay: string; shrunkSize: { operations: number; faults: number } };
    expect(j).toMatchObject({ verdict: 'fails', ok: false, moduleLoads: 'per-process', violations: ['key-reuse'], shrunkSize: { operations: 2, faults: 0 } });
    expect(j.why[0]).toMatch(/^client 'counter-key' holds only because its simulated calls share module-level state: with its module loaded once per simulated client process, .* it fails key-reuse \(run \d+ of 30\) — a key from a counter/);
    expect(j.replay).toBe(`RETRYSIM_APP_PER_PROCESS=1 retrysim replay --client ${COUNTER} ${j.counterexample} --trace`);
    expect(r.err).toContain('module state: held with the client\'s module loaded once for every call; the first 30 runs again with one load per simulated client process');
    expect(JSON.parse(readFileSync(j.counterexample, 'utf8')).description).toMatch(/replay with RETRYSIM_APP_PER_PROCESS=1\.$/);

    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '1');
    const again = await runMain(['replay', '--client', COUNTER, j.counterexample, '--json']);
    expect(again.code, again.err).toBe(0);
    const aj = JSON.parse(again.out) as { expectMet: boolean; moduleLoads: string; traceHash: string; violations: Array<{ invariant: string }> };
    expect(aj).toMatchObject({ expectMet: true, moduleLoads: 'per-process' });
    expect(aj.violations.map((v) => v.invariant)).toEqual(['key-reuse']);
    // Each copy's top level and calls draw from the run's seeded stream, in worker order: the same trace twice.
    expect((JSON.parse((await runMain(['replay', '--client', COUNTER, j.counterexample, '--json'])).out) as { traceHash: string }).traceHash).toBe(aj.traceHash);
    const text = await runMain(['replay', '--client', COUNTER, j.counterexample]);
    expect(text.out.split('\n')[0]).toBe(`RETRYSIM_APP_PER_PROCESS=1 retrysim replay --client ${COUNTER} ${j.counterexample}`);

    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    const shared = await runMain(['replay', '--client', COUNTER, j.counterexample, '--json']);
    expect(shared.code).toBe(1);
    expect((JSON.parse(shared.out) as { moduleLoads: string }).moduleLoads).toBe('once');
  }, 120_000);

  it('check --client: a client whose counter is harmless holds either way (exit 0, module loaded once); so does a key per call', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    for (const name of ['logged-counter', 'uuid-key']) {
      const r = await runMain(['check', '--client', COUNTER, '--name', name, '--runs', '30', '--found', tmp('rs-client-module-state-'), '--json']);
      expect(r.code, r.err).toBe(0);
      expect(JSON.parse(r.out)).toMatchObject({ verdict: 'holds', moduleLoads: 'once', why: [] });
      expect(r.err).toContain('module state: the same verdict with one load per client process (30 runs)');
    }
  }, 120_000);

  it('RETRYSIM_APP_PER_PROCESS=1 check --client: the whole campaign per call, its replay line says so; --expect fails is met (exit 0)', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '1');
    const r = await runMain(['check', '--client', COUNTER, '--runs', '30', '--found', tmp('rs-client-module-state-'), '--expect', 'fails', '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; why: string[]; moduleLoads: string; replay: string; runs: number };
    expect(j).toMatchObject({ verdict: 'fails', why: [], moduleLoads: 'per-process' });
    expect(j.replay).toMatch(/^RETRYSIM_APP_PER_PROCESS=1 retrysim replay --client /);
    expect(r.err).toContain('module loads: one per simulated client process (RETRYSIM_APP_PER_PROCESS=1)');
  }, 120_000);
});
