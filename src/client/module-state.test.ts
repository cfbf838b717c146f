// What a retry client keeps at module level — a counter its keys come from,
// a breaker, a retry budget — is one per client process, and starts again in
// every new or restarted one. Loaded once for a campaign, the module was
// shared by every call of every run: a key `order-${++n}` never repeated
// there, so a client whose two processes both send `order-1` for two
// different orders (the second answered with the first's result, or refused:
// an order lost) held 300 of 300 runs. `check --client` now runs the first
// runs of a holding verdict again with each call (each simulated worker) from
// its own copy of the module (src/app/per-process.ts), as the apps' check does.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { freshClientLoader, loadClient } from './load.js';
import { runClientCampaign } from './campaign.js';
import { runMain } from '../testing/cli.js';
import { fc, clientCases, explainClient, runClientCase } from '../vitest.js';
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

  it('check --client: a verdict that holds only with one shared load fails, in one line, exit 1; its file says client.moduleLoads per-process and replays so with no variable set (exit 0); RETRYSIM_APP_PER_PROCESS=0 overrides it (exit 1)', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    const found = tmp('rs-client-module-state-');
    const html = tmp('rs-client-module-state-html-');
    const r = await runMain(['check', '--client', COUNTER, '--runs', '30', '--found', found, '--html', html, '--json']);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; ok: boolean; why: string[]; moduleLoads: string; violations: string[]; counterexample: string; replay: string; shrunkSize: { operations: number; faults: number } };
    expect(j).toMatchObject({ verdict: 'fails', ok: false, moduleLoads: 'per-process', violations: ['key-reuse'], shrunkSize: { operations: 2, faults: 0 } });
    expect(j.why[0]).toMatch(/^client 'counter-key' holds only because its simulated calls share module-level state: with its module loaded once per simulated client process, .* it fails key-reuse \(run \d+ of 30\) — a key from a counter/);
    // The line alone replays it: the file says how the client loads.
    expect(j.replay).toBe(`retrysim replay --client ${COUNTER} ${j.counterexample} --trace`);
    expect(r.err).toContain('module state: held with the client\'s module loaded once for every call; the first 30 runs again with one load per simulated client process');
    const file = JSON.parse(readFileSync(j.counterexample, 'utf8')) as { description: string; client: { moduleLoads?: string }; service: { moduleLoads?: string } };
    expect(file.client.moduleLoads).toBe('per-process');
    expect('moduleLoads' in file.service).toBe(false);
    expect(file.description).toMatch(/Found with the client's module loaded once per simulated client process \(each call its own copy\)\.$/);
    // The check's page draws the very run found, and says how the client was loaded.
    const page = readdirSync(html).find((f) => f !== 'index.html' && f.endsWith('.html'));
    expect(page).toBeDefined();
    expect(readFileSync(join(html, page!), 'utf8')).toContain('"clientModuleLoads":"per-process"');

    const again = await runMain(['replay', '--client', COUNTER, j.counterexample, '--json']);
    expect(again.code, again.err).toBe(0);
    const aj = JSON.parse(again.out) as { expectMet: boolean; moduleLoads: string; traceHash: string; violations: Array<{ invariant: string }> };
    expect(aj).toMatchObject({ expectMet: true, moduleLoads: 'per-process' });
    expect(aj.violations.map((v) => v.invariant)).toEqual(['key-reuse']);
    // Each copy's top level and calls draw from the run's seeded stream, in worker order: the same trace twice.
    expect((JSON.parse((await runMain(['replay', '--client', COUNTER, j.counterexample, '--json'])).out) as { traceHash: string }).traceHash).toBe(aj.traceHash);
    const text = await runMain(['replay', '--client', COUNTER, j.counterexample]);
    expect(text.code).toBe(0);
    const lines = text.out.split('\n');
    expect(lines[0]).toBe(`retrysim replay --client ${COUNTER} ${j.counterexample}`);
    expect(lines).toContain("module loads: one per simulated client process (what the client keeps at module level is each call's own) — the file's client.moduleLoads");
    // The variable set to what the file says changes nothing on the line.
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '1');
    expect((await runMain(['replay', '--client', COUNTER, j.counterexample])).out.split('\n')[0]).toBe(`retrysim replay --client ${COUNTER} ${j.counterexample}`);

    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '0');
    const shared = await runMain(['replay', '--client', COUNTER, j.counterexample, '--json']);
    expect(shared.code).toBe(1);
    expect((JSON.parse(shared.out) as { moduleLoads: string }).moduleLoads).toBe('once');
    const sharedText = await runMain(['replay', '--client', COUNTER, j.counterexample]);
    expect(sharedText.out.split('\n')[0]).toBe(`RETRYSIM_APP_PER_PROCESS=0 retrysim replay --client ${COUNTER} ${j.counterexample}`);
    expect(sharedText.out).toContain("module loads: once for the run (shared by every simulated client call) — RETRYSIM_APP_PER_PROCESS=0, over the file's client.moduleLoads 'per-process'");
  }, 120_000);

  it('client.moduleLoads: absent, a replay says nothing of module loads; a bad value, or the field on a file naming no client module, is a scenario error naming client.moduleLoads (exit 2)', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    const found = tmp('rs-client-module-state-');
    const r = await runMain(['check', '--client', COUNTER, '--runs', '30', '--found', found, '--json']);
    const cx = (JSON.parse(r.out) as { counterexample: string }).counterexample;
    const base = JSON.parse(readFileSync(cx, 'utf8')) as { client: Record<string, unknown> };
    const write = (name: string, client: Record<string, unknown>) => {
      const f = join(found, name);
      writeFileSync(f, JSON.stringify({ ...base, client }));
      return f;
    };
    const { moduleLoads: _m, ...without } = base.client;
    const plain = await runMain(['replay', '--client', COUNTER, write('plain.json', without), '--json']);
    expect(plain.code).toBe(1); // loaded once, the two keys differ: the file's expect is not met
    expect('moduleLoads' in (JSON.parse(plain.out) as object)).toBe(false);
    expect((await runMain(['replay', '--client', COUNTER, write('plain.json', without)])).out).not.toContain('module loads');
    const bad = await runMain(['replay', '--client', COUNTER, write('bad.json', { ...base.client, moduleLoads: 'per-call' })]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/client\.moduleLoads.*expected 'once' \(the client's module loaded once for the run\) or 'per-process'.*got "per-call"/);
    const { module: _mod, ...noModule } = base.client;
    const orphan = await runMain(['replay', '--client', COUNTER, write('orphan.json', noModule)]);
    expect(orphan.code).toBe(2);
    expect(orphan.err).toMatch(/client\.moduleLoads.*names no client module/);
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

  it('RETRYSIM_APP_PER_PROCESS=1 check --client: the whole campaign per call, its file says so (the replay line needs no variable); --expect fails is met (exit 0)', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '1');
    const r = await runMain(['check', '--client', COUNTER, '--runs', '30', '--found', tmp('rs-client-module-state-'), '--expect', 'fails', '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; why: string[]; moduleLoads: string; replay: string; runs: number };
    expect(j).toMatchObject({ verdict: 'fails', why: [], moduleLoads: 'per-process' });
    // The file says how the client loads: its line needs no variable.
    expect(j.replay).toMatch(/^retrysim replay --client /);
    expect(JSON.parse(readFileSync((j as unknown as { counterexample: string }).counterexample, 'utf8')).client.moduleLoads).toBe('per-process');
    expect(r.err).toContain('module loads: one per simulated client process (RETRYSIM_APP_PER_PROCESS=1)');
  }, 120_000);
  it('explainClient with the client\'s module: a property that passes with one shared load fails on the counter client with check\'s line and a file that replays with no variable set; a key per call passes', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    const found = tmp('rs-client-module-state-vitest-');
    const counter = await loadClient(COUNTER, 'counter-key');
    const prop = (client: typeof counter) => fc.asyncProperty(clientCases(), async (c) => (await runClientCase(client, c)).violations.length === 0);
    const err = await fc.assert(prop(counter), { ...explainClient(counter, { module: COUNTER, foundDir: found }), numRuns: 30, seed: 1 }).then(() => undefined, (e: unknown) => e as Error);
    expect(err).toBeDefined();
    const msg = err!.message;
    expect(msg).toMatch(/^Property passed 30 tests with the client's module loaded once \(seed 1\), and fails with one load per simulated client process/);
    expect(msg).toMatch(/retrysim: client 'counter-key' holds only because its simulated calls share module-level state: .* it fails key-reuse \(run \d+ of 30\)/);
    const file = /written to (\S+)/.exec(msg)![1]!;
    expect(msg).toContain(`replay: retrysim replay --client ${COUNTER} ${file} --trace`);
    expect(JSON.parse(readFileSync(file, 'utf8')).client.moduleLoads).toBe('per-process');
    const again = await runMain(['replay', '--client', COUNTER, file, '--json']);
    expect(again.code, again.err).toBe(0);

    const uuid = await loadClient(COUNTER, 'uuid-key');
    await fc.assert(prop(uuid), { ...explainClient(uuid, { module: COUNTER, foundDir: found }), numRuns: 30, seed: 1 });
  }, 120_000);
});
