import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { processError } from '@vitest/utils/error';
import { fc, clientCases, explainClient, replayable, runClientCase, runServiceCase, serviceCases } from './vitest.js';
import { loadScenario } from './scenario/load.js';
import { runScenario } from './scenario/run.js';
import { ReplayDivergenceError } from './sim/choice/replay.js';
import twoTransactions from '../examples/two-transactions/service.js';
import * as broken from './service/fixtures/broken.js';
import moduleMap from './service/fixtures/module-map.js';
import moduleBreaker from './client/fixtures/module-breaker.js';
import clockBreaker from './client/fixtures/clock-breaker.js';
import moduleLimiter from './client/fixtures/module-limiter.js';
import instanceHeader from './client/fixtures/instance-header.js';
import wrongPath from './client/fixtures/wrong-path-client.js';
import hangsOnDuplicate from './service/fixtures/hangs-on-duplicate.js';
import noAnswerOnReuse from './app/fixtures/no-answer-on-reuse.js';
import stuckAfterKill from './service/fixtures/stuck-after-kill.js';
import stuckAfterKillProgress from './service/fixtures/stuck-after-kill-progress.js';
import { PROGRESS_NOT_JUDGED } from './campaign/coverage.js';
import { appService } from './app/define.js';
import stuckOn409 from './client/fixtures/stuck-on-409.js';
import { buggyClient } from '../examples/fetch-retry-client/client.js';
import { runMain } from './testing/cli.js';
import { failure } from './testing/failure.js';
import { tempDirs } from './testing/temp-dirs.js';

const tmp = tempDirs();

const cli = (args: string[]) => runMain(args);

afterEach(() => vi.restoreAllMocks());

const module = 'examples/two-transactions/service.ts';


describe('retrysim/vitest', () => {
  it('a failing service property prints one counterexample — the minimised one — with the seed and a replay command that runs', async () => {
    const found = tmp('found-');
    const prop = fc.asyncProperty(serviceCases(twoTransactions, { module, faults: ['crash'] }), async (c) => (await runServiceCase(twoTransactions, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...replayable(twoTransactions, { module, foundDir: found }), numRuns: 300, seed: 1 }));
    expect(msg).toContain('seed 1, path "');
    expect(msg.match(/minimised counterexample/g)).toHaveLength(1);
    // fast-check's raw counterexample (a larger case than the file holds) is not printed beside it.
    expect(msg).not.toContain('Counterexample:');
    expect(msg).not.toContain('"scenario"');
    expect(msg).toContain('1 op, 1 worker, 1 fault,');
    const cmd = /replay: (retrysim replay .*)$/m.exec(msg)![1]!;
    expect(cmd).toContain(`--service ${module} ${found}`);
    // The file says truthfully what found it — a vitest property, not `retrysim check` — and how to replay it.
    const description = loadScenario(/written to (\S+)/.exec(msg)![1]!).description;
    expect(description).toMatch(new RegExp(`^Found by a vitest property \\(retrysim's vitest helper, seed 1; replay with retrysim replay --service ${module} <this file>\\): `));
    expect(description).not.toContain('retrysim check');
    const r = await cli(cmd.split(' ').slice(1));
    expect(r.code, r.err).toBe(0);
  });

  it('a failing property on a service whose state outlives a run (a module-level Map) names that, and leaves no file that would not replay', async () => {
    const found = tmp('found-');
    const mapModule = 'src/service/fixtures/module-map.ts';
    const prop = fc.asyncProperty(serviceCases(moduleMap, { module: mapModule }), async (c) => (await runServiceCase(moduleMap, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...replayable(moduleMap, { module: mapModule, foundDir: found }), numRuns: 50, seed: 1 }));
    expect(msg).toMatch(/retrysim: service 'module-map': its counterexample did not reproduce when replayed in a fresh process \(.+\): .*module level.*memory\(\)/);
    expect(msg).not.toContain('written to');
    expect(readdirSync(found)).toEqual([]);
  }, 60_000);

  it('explainClient on a client whose state outlives a run (a module-level breaker) names that, and leaves no file that would not replay', async () => {
    const found = tmp('found-');
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(moduleBreaker, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(moduleBreaker, { module: 'src/client/fixtures/module-breaker.ts', foundDir: found }), numRuns: 300, seed: 1 }));
    expect(msg).toMatch(/retrysim: client 'module-breaker': its counterexample did not reproduce when replayed in a fresh process \(.+\): .*module level/);
    // As check --client says it: per process its first 50 runs hold (a breaker spans calls by design: not "keep it inside run()").
    expect(msg).toMatch(/its first 50 runs hold, so what failed it is state its calls share .*RETRYSIM_APP_PER_PROCESS=1 retrysim check --client src\/client\/fixtures\/module-breaker\.ts$/m);
    expect(msg).not.toContain('written to');
    expect(readdirSync(found)).toEqual([]);
  }, 120_000);

  it('explainClient on a client whose failing case state from earlier runs decided (a breaker timed by Date.now at module level) fails on its real bug with one load per client process, as check --client does, with a file that replays', async () => {
    // Until 2026-12 the helper stopped at "did not reproduce … keep what one call needs inside run()", with no
    // file, where check --client gives the verdict of fresh processes: it fails non-retryable (it retries a
    // 400). A cockatiel breaker kept at module level over a retry of every error came out that way: the
    // helper never named the 400.
    const found = tmp('found-');
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(clockBreaker, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(clockBreaker, { module: 'src/client/fixtures/clock-breaker.ts', foundDir: found }), numRuns: 300, seed: 1 }));
    expect(msg).toMatch(/retrysim: client 'clock-breaker' fails non-retryable with its module loaded once per simulated client process, as separate client processes load it \(run \d+ of 50\): a failure of its own code/);
    expect(msg).toMatch(/^  non-retryable \(op\d\): op\d\.w0 got HTTP 400 /m);
    const file = /written to (\S+)/.exec(msg)![1]!;
    expect(readdirSync(found)).toHaveLength(1);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { client: { moduleLoads?: string } }).client.moduleLoads).toBe('per-process');
    const r = await cli(/replay: retrysim (replay .*)$/m.exec(msg)![1]!.split(' '));
    expect(r.code, r.err).toBe(0);
  }, 120_000);

  it('explainClient, as check --client: a counterexample that meets its expect in a fresh process on another run is not the one reported', async () => {
    // A rate limiter at module level held an earlier run's instant: the property reported attempts at t=30233.. ms,
    // which the written file, replayed, never shows (t=2.. ms). The run must be the same, not only the expect.
    const found = tmp('found-');
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(moduleLimiter, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(moduleLimiter, { module: 'src/client/fixtures/module-limiter.ts', foundDir: found }), numRuns: 100, seed: 1 }));
    expect(msg).toMatch(/retrysim: client 'module-limiter' fails backoff with its module loaded once per simulated client process/);
    expect(msg).not.toMatch(/t=\d{4,} ms/);
    const file = /written to (\S+)/.exec(msg)![1]!;
    const r = await cli(['replay', '--client', 'src/client/fixtures/module-limiter.ts', file, '--json']);
    expect(r.code, r.err).toBe(0);
  }, 120_000);

  it('explainClient, as check --client: header values set at load (an instance id, a call number) that no check reads do not make a counterexample "module state"', async () => {
    const found = tmp('found-');
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(instanceHeader, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(instanceHeader, { module: 'src/client/fixtures/instance-header.ts', foundDir: found }), numRuns: 100, seed: 1 }));
    expect(msg).toMatch(/stable-key/);
    expect(msg).not.toMatch(/module level|per simulated client process/);
  }, 120_000);

  it('a client property that passes while no request was ever answered 2xx (a wrong path: every answer 404) fails as inconclusive, as check --client says; a working client passes', async () => {
    const prop = (client: typeof wrongPath) => fc.asyncProperty(clientCases({ faults: ['crash'] }), async (c) => (await runClientCase(client, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop(wrongPath), { ...explainClient(wrongPath), numRuns: 20, seed: 1 }));
    // What came back is quoted: the wrong path shows in the line itself.
    expect(msg).toBe('retrysim: inconclusive, not passed: no request of the 20 runs of client \'wrong-path\' was answered 2xx (the first: op1.w0 POST /v2/items → 404 {"error":"no route for POST /v2/items"}), and a client that never succeeds keeps every check vacuously');
    const fixed = (await import('../examples/fetch-retry-client/client.js')).fixedClient;
    await fc.assert(prop(fixed), { ...explainClient(fixed), numRuns: 20, seed: 1 });
  }, 60_000);

  it('a property that passes while no request was ever answered 2xx (every request throws) fails as inconclusive; the same property on a working service passes', async () => {
    const prop = (def: typeof broken.fine) => fc.asyncProperty(serviceCases(def, { module: `fixtures/${def.name}.ts`, faults: [] }), async (c) => (await runServiceCase(def, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop(broken.throws), { ...replayable(broken.throws), numRuns: 20, seed: 1 }));
    expect(msg).toMatch(/^retrysim: inconclusive, not passed: no request of the 20 runs was answered 2xx or made an effect \(answers: 500\)/);
    expect(msg).toContain('retrysim serve --service fixtures/throws.ts');
    // The exception is named, where the handler threw it.
    expect(msg).toMatch(/\(answers: 500\); its handler threw TypeError: Cannot read properties of undefined \(reading 'id'\) \(at .*broken\.ts:\d+:\d+\)/);
    await fc.assert(prop(broken.fine), { ...replayable(broken.fine), numRuns: 20, seed: 1 });
  });

  it('a property over a module retrysim cannot run (an undeclared step) fails with check\'s one line, not a shrunk case that "could not be minimised"', async () => {
    const prop = fc.asyncProperty(serviceCases(broken.undeclaredStep, { module: 'fixtures/undeclared-step.ts', faults: [] }), async (c) => (await runServiceCase(broken.undeclaredStep, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...replayable(broken.undeclaredStep), numRuns: 20, seed: 1 }));
    expect(msg).toMatch(/^retrysim: service 'undeclared-step': handle called sim\.step\('\w+'\), which is not declared in steps \[.*\]; declare every interleaving point \(retrysim check --service says the same, exit 2\)$/);
    expect(msg).not.toContain('Counterexample:');
  });

  it('a property whose run stops (a request never answered) fails with check\'s line and the shrunk stopping run written; its replay stops the same way', async () => {
    const found = tmp('found-');
    const module = 'src/service/fixtures/hangs-on-duplicate.ts';
    const prop = fc.asyncProperty(serviceCases(hangsOnDuplicate, { module }), async (c) => (await runServiceCase(hangsOnDuplicate, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...replayable(hangsOnDuplicate, { foundDir: found }), numRuns: 100, seed: 1 }));
    const [line, stop] = msg.split('\n');
    expect(line).toMatch(/^retrysim: service 'hangs-on-duplicate': never answered request \S+: .* \(retrysim check --service says the same, exit 2\)$/);
    const file = join(found, readdirSync(found)[0]!);
    expect(stop).toBe(`  it stopped at run 1: ${file} — retrysim replay --service ${module} ${file} --trace shows the run up to the stop`);
    expect(loadScenario(file).description).toMatch(/^Run 1 of a vitest property \(retrysim's vitest helper, seed 1\) stopped the campaign/);
    const r = await cli(['replay', '--service', module, file]);
    expect(r.code).toBe(2);
    expect(r.err.trim()).toBe(line!.replace(/^retrysim: /, 'retrysim replay: ').replace(' (retrysim check --service says the same, exit 2)', ''));
  }, 60_000);

  it('a passing property over a service without `progress` says, once, that progress was not judged (as check does under its verdict); with progress the stuck key fails', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    const module = 'src/service/fixtures/stuck-after-kill.ts';
    const prop = fc.asyncProperty(serviceCases(stuckAfterKill, { module }), async (c) => (await runServiceCase(stuckAfterKill, c)).violations.length === 0);
    await fc.assert(prop, { ...replayable(stuckAfterKill), numRuns: 50, seed: 1 });
    await fc.assert(prop, { ...replayable(stuckAfterKill), numRuns: 50, seed: 2 });
    const said = warn.mock.calls.map((c) => String(c[0])).filter((l) => l.startsWith('retrysim:'));
    expect(said).toEqual([`retrysim: service 'stuck-after-kill' passed, but ${PROGRESS_NOT_JUDGED}`]);
    const judged = fc.asyncProperty(serviceCases(stuckAfterKillProgress, { module: 'src/service/fixtures/stuck-after-kill-progress.ts' }), async (c) => (await runServiceCase(stuckAfterKillProgress, c)).violations.length === 0);
    expect(await failure(fc.assert(judged, { ...replayable(stuckAfterKillProgress, { foundDir: tmp('found-') }), numRuns: 300, seed: 1 }))).toMatch(/progress/);
    expect(warn.mock.calls.filter((c) => String(c[0]).includes('stuck-after-kill-progress'))).toEqual([]);
  }, 60_000);

  it('an app whose run stops says check --app says the same (an app is checked with --app, not --service)', async () => {
    const found = tmp('found-');
    const app = appService(noAnswerOnReuse);
    const prop = fc.asyncProperty(serviceCases(app, { module: 'src/app/fixtures/no-answer-on-reuse.ts' }), async (c) => (await runServiceCase(app, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...replayable(app, { foundDir: found }), numRuns: 100, seed: 1 }));
    expect(msg.split('\n')[0]).toMatch(/^retrysim: app 'no-answer-on-reuse': never answered POST \/orders.* \(retrysim check --app says the same, exit 2\)$/);
  }, 60_000);

  it('an app descriptor given as is (no appService) is run as its service, as check --service takes one: the same line', async () => {
    const found = tmp('found-');
    const prop = fc.asyncProperty(serviceCases(noAnswerOnReuse, { module: 'src/app/fixtures/no-answer-on-reuse.ts' }), async (c) => (await runServiceCase(noAnswerOnReuse, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...replayable(noAnswerOnReuse, { foundDir: found }), numRuns: 100, seed: 1 }));
    expect(msg.split('\n')[0]).toMatch(/^retrysim: app 'no-answer-on-reuse': never answered POST \/orders.* \(retrysim check --app says the same, exit 2\)$/);
  }, 60_000);

  it('explainClient, as check --client: a client whose run stops (it waits on nothing the run settles) fails with check\'s line and the shrunk stopping run written', async () => {
    const found = tmp('found-');
    const module = 'src/client/fixtures/stuck-on-409.ts';
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(stuckOn409, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(stuckOn409, { module, foundDir: found }), numRuns: 300, seed: 1 }));
    const [line, stop] = msg.split('\n');
    expect(line).toBe("retrysim: client module 'stuck-on-409': the client is waiting, but on neither a timer nor a request (real I/O, a host callback outside the fake clock, or a promise nobody resolves); it cannot run on virtual time (retrysim check --client says the same, exit 2)");
    const file = join(found, readdirSync(found)[0]!);
    expect(stop).toMatch(new RegExp(`^ {2}it stopped at run \\d+: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} — retrysim replay --client ${module} \\S+ --trace shows the run up to the stop$`));
    const r = await cli(['replay', '--client', module, file]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('the client is waiting, but on neither a timer nor a request');
  }, 60_000);

  it('clientCases({ service, module }) records the module, so the printed replay command runs', async () => {
    const found = tmp('found-');
    const prop = fc.asyncProperty(clientCases({ service: twoTransactions, module: new URL('../examples/two-transactions/service.ts', import.meta.url) }), async (c) => (await runClientCase(buggyClient, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(buggyClient, { module: 'examples/fetch-retry-client/client.ts', foundDir: found }), numRuns: 300, seed: 1 }));
    expect(msg).not.toContain('Counterexample:');
    const file = /written to (\S+)/.exec(msg)![1]!;
    expect(loadScenario(file).service.module).toBe(module);
    expect(loadScenario(file).description).toMatch(/^Found for retry client 'fetch-retry-client' by a vitest property \(retrysim's vitest helper, seed 1; replay with retrysim replay --client examples\/fetch-retry-client\/client\.ts <this file>\): /);
    const cmd = /replay: (retrysim replay .*)$/m.exec(msg)![1]!;
    const r = await cli(cmd.split(' ').slice(1));
    expect(r.code, r.err).toBe(0);
  });

  it('a replay divergence reaches vitest\'s reporter as the divergence, not a serialization failure', async () => {
    const found = tmp('found-');
    // The race (two workers, one preemption): a schedule with decisions in it.
    const made = await cli(['check', '--service', module, '--runs', '300', '--found', found, '--json']);
    const file = (JSON.parse(made.out) as { counterexample: string }).counterexample;
    const s = loadScenario(file);
    expect(s.schedule.length).toBeGreaterThan(0);
    // The first recorded decision offered another candidate: both the recorded and the offered decision are in the error.
    const cut = { ...s, schedule: s.schedule.map((d, i) => (i === 0 ? { ...d, of: [...d.of, 'w9#1'] } : d)) };
    let err: unknown;
    try {
      await runScenario(cut, { strictReplay: true, service: twoTransactions });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ReplayDivergenceError);
    // What vitest does with a thrown error before printing it.
    const shown = processError(err) as { message: string };
    expect(shown.message).toContain('replay diverged at choice');
    expect(shown.message).not.toContain('Failed to fully serialize');
    expect(readFileSync(file, 'utf8')).toContain('"schedule"');
  });
});
