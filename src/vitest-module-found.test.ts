/**
 * The vitest helper not told the module (`replayable(service)`,
 * `explainClient(client)` with no `module`): the file it writes and the
 * replay line it prints name the user's file that defines the service or
 * client (src/service/defined-in.ts). Until 2026-12 a service's file named
 * its `name` ("module": "two-transactions") and the printed line failed
 * when pasted; a client's line said `<your client module>`; and either way
 * the check that the file replays in a fresh process, and a passing
 * client's per-process check, were skipped without a word.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { fc, clientCases, explainClient, replayable, runClientCase, runServiceCase, serviceCases } from './vitest.js';
import { loadScenario } from './scenario/load.js';
import { runMain } from './testing/cli.js';
import { failure } from './testing/failure.js';
import twoTransactions from '../examples/two-transactions/service.js';
import moduleMap from './service/fixtures/module-map.js';
import checkThenAct from './service/fixtures/uuid-orders-check-then-act.js';
import { uuidOrders } from './service/fixtures/uuid-orders.js';
import { buggyClient } from '../examples/fetch-retry-client/client.js';
import counterKey from './client/fixtures/module-counter.js';
import type { ServiceDefinition } from './service/definition.js';
import { appService } from './app/define.js';
import limiterAtModule from './app/fixtures/limiter-at-module-app.js';
import { tempDirs } from './testing/temp-dirs.js';

const tmp = tempDirs();

const found = () => tmp('rs-module-found-');


async function failingService(def: ServiceDefinition, dir: string, numRuns = 300, faults?: NonNullable<Parameters<typeof serviceCases>[1]>['faults']): Promise<string> {
  const prop = fc.asyncProperty(serviceCases(def, faults ? { faults } : {}), async (c) => (await runServiceCase(def, c)).violations.length === 0);
  return failure(fc.assert(prop, { ...replayable(def, { foundDir: dir }), numRuns, seed: 1 }));
}

describe('the vitest helper finds the module it was not told', () => {
  it('a service defined in its own file: the file and the replay line name it, and the line runs as printed', async () => {
    const dir = found();
    const msg = await failingService(twoTransactions, dir, 300, ['crash']);
    const module = 'examples/two-transactions/service.ts';
    const cmd = /replay: (retrysim replay .*)$/m.exec(msg)![1]!;
    expect(cmd).toBe(`retrysim replay --service ${module} ${/written to (\S+)/.exec(msg)![1]} --trace`);
    const s = loadScenario(/written to (\S+)/.exec(msg)![1]!);
    expect(s.service.module).toBe(module);
    expect(s.description).toContain(`replay with retrysim replay --service ${module} <this file>`);
    expect(msg).not.toContain("is the service's name, not a file");
    const r = await runMain(cmd.split(' ').slice(1));
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('expect: met');
  }, 120_000);

  it('a service keeping state at module level: with its module found, the fresh-process check runs and no file that would not replay is left', async () => {
    const dir = found();
    const msg = await failingService(moduleMap, dir, 50);
    expect(msg).toMatch(/retrysim: service 'module-map': its counterexample did not reproduce when replayed in a fresh process/);
    expect(readdirSync(dir)).toEqual([]);
  }, 120_000);

  it('a variant made by a factory in another file: found through the test file\'s own imports', async () => {
    const dir = found();
    const msg = await failingService(checkThenAct, dir, 300);
    const module = 'src/service/fixtures/uuid-orders-check-then-act.ts';
    expect(msg).toContain(`replay: retrysim replay --service ${module} `);
    const file = /written to (\S+)/.exec(msg)![1]!;
    expect(loadScenario(file).service.module).toBe(module);
    const r = await runMain(['replay', '--service', module, file]);
    expect(r.code, r.err).toBe(0);
  }, 120_000);

  it('a definition made in the test itself: no file exports it, so the line says how to name the module', async () => {
    const dir = found();
    const made = uuidOrders({ bug: 'check-then-act', name: 'made-in-a-test' });
    const msg = await failingService(made, dir, 300);
    expect(msg).toContain('replay: retrysim replay --service made-in-a-test ');
    expect(msg).toContain("(made-in-a-test is the service's name, not a file: its module could not be found from where its functions are written; replayable(service, { module: new URL('./service.ts', import.meta.url) }) names it");
  }, 120_000);

  it('an app keeping a limiter at module level: its module found (its descriptor\'s operation is written there), the per-process check runs and names it', async () => {
    const app = appService(limiterAtModule);
    const prop = fc.asyncProperty(serviceCases(app), async (c) => (await runServiceCase(app, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...replayable(app, { foundDir: found() }), numRuns: 30, seed: 1 }));
    // Before: "its module is not known (limiter-at-module is no file)".
    expect(msg).toMatch(/^retrysim: inconclusive, not passed: app 'limiter-at-module' keeps state at module level .* RETRYSIM_APP_PER_PROCESS=1 retrysim check --app src\/app\/fixtures\/limiter-at-module-app\.ts$/);
  }, 120_000);

  it('a client: the replay line names its file and runs as printed', async () => {
    const dir = found();
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(buggyClient, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(buggyClient, { foundDir: dir }), numRuns: 300, seed: 1 }));
    const cmd = /replay: (retrysim replay .*)$/m.exec(msg)![1]!;
    expect(cmd).toMatch(/^retrysim replay --client examples\/fetch-retry-client\/client\.ts \S+ --trace$/);
    expect(msg).not.toContain('<your client module>');
    const r = await runMain(cmd.split(' ').slice(1));
    expect(r.code, r.err).toBe(0);
  }, 120_000);

  it('a client against a user service, neither module named: the file names both and replays with no flag', async () => {
    const dir = found();
    const prop = fc.asyncProperty(clientCases({ service: twoTransactions }), async (c) => (await runClientCase(buggyClient, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(buggyClient, { foundDir: dir }), numRuns: 300, seed: 1 }));
    const file = /written to (\S+)/.exec(msg)![1]!;
    const s = loadScenario(file);
    expect(s.service.module).toBe('examples/two-transactions/service.ts');
    expect(s.client.module).toBe('examples/fetch-retry-client/client.ts');
    const r = await runMain(['replay', file]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('expect: met');
  }, 120_000);

  it('a client keeping its key counter at module level passes with one shared load; with its module found, the per-process check fails it as check --client does', async () => {
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    const dir = found();
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(counterKey, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(counterKey, { foundDir: dir }), numRuns: 30, seed: 1 }));
    expect(msg).toMatch(/^Property passed 30 tests with the client's module loaded once \(seed 1\), and fails with one load per simulated client process/);
    const file = /written to (\S+)/.exec(msg)![1]!;
    expect(msg).toContain(`replay: retrysim replay --client src/client/fixtures/module-counter.ts ${file} --trace`);
    expect(JSON.parse(readFileSync(file, 'utf8')).client.moduleLoads).toBe('per-process');
  }, 120_000);
});
