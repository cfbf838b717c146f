import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fc, clientCases, explainClient, replayable, runClientCase, runServiceCase, serviceCases } from './vitest.js';
import { loadScenario } from './scenario/load.js';
import twoTransactions from '../examples/two-transactions/service.js';
import ttl from '../examples/ttl-from-date-now/service.js';
import { buggyClient, fixedClient } from '../examples/fetch-retry-client/client.js';
import lease from '../examples/lease-without-fencing/service.js';
import { runMain } from './testing/cli.js';
import { failure } from './testing/failure.js';
import { tempDirs } from './testing/temp-dirs.js';

const tmp = tempDirs();


/** A clock that jumps an hour per read: any budget has run out by the next read, whatever the machine's speed. */
function jumpingClock(): () => number {
  let now = 0;
  return () => (now += 3_600_000);
}

/** Runs the printed replay command; resolves to its exit code (and stderr, for the assertion's message). */
async function replays(msg: string): Promise<{ code: number; err: string }> {
  const cmd = /replay: (retrysim replay .*)$/m.exec(msg)![1]!;
  return runMain(cmd.split(' ').slice(1));
}

describe('retrysim/vitest: the shrink budget (shrinkBudgetMs, as check --shrink-budget)', () => {
  it('a service property whose budget has run out when the failure is found still fails with the counterexample in hand, written and replayable, and says shrinking stopped at its time limit', async () => {
    const found = tmp('rs-vitest-shrink-');
    const module = 'examples/two-transactions/service.ts';
    const prop = fc.asyncProperty(serviceCases(twoTransactions, { module, faults: ['crash'] }), async (c) => (await runServiceCase(twoTransactions, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...replayable(twoTransactions, { module, foundDir: found, shrinkBudgetMs: 1, clockMs: jumpingClock() }), numRuns: 300, seed: 1 }));
    // fast-check ran no shrink candidate: the budget covers its shrinking too, not only the minimiser's.
    expect(msg).toContain('shrunk 0 time(s)');
    expect(msg).toContain('retrysim: counterexample, shrinking stopped at its time limit (shrink budget 1 ms) (');
    expect(msg).not.toContain('minimised counterexample');
    expect(msg).toContain('not known to be minimal: shrinking stopped at its time limit (shrink budget 1 ms); the counterexample fails and replays as written');
    expect(msg).toMatch(/exactly-one \(op\d+\): /);
    const file = /written to (\S+)/.exec(msg)![1]!;
    expect(readdirSync(found)).toEqual([file.split('/').at(-1)]);
    expect(loadScenario(file).description).toContain('Not shown minimal: shrinking stopped at its time limit (shrink budget 1 ms)');
    const r = await replays(msg);
    expect(r.code, r.err).toBe(0);
  });

  it('a client property stopped by its budget says so too, and its file replays', async () => {
    const found = tmp('rs-vitest-shrink-');
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(buggyClient, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(buggyClient, { module: 'examples/fetch-retry-client/client.ts', foundDir: found, shrinkBudgetMs: 1, clockMs: jumpingClock() }), numRuns: 300, seed: 1 }));
    expect(msg).toContain('shrunk 0 time(s)');
    expect(msg).toContain('not known to be minimal: shrinking stopped at its time limit (shrink budget 1 ms)');
    expect(msg).toContain('written to ');
    const r = await replays(msg);
    expect(r.code, r.err).toBe(0);
  });

  it('a budget that is not a positive number is one clear line when the parameters are made', () => {
    expect(() => replayable(twoTransactions, { shrinkBudgetMs: 0 })).toThrow('retrysim: replayable(two-transactions): shrinkBudgetMs must be a number of ms above 0 (Infinity: no time limit), got 0');
    expect(() => explainClient(buggyClient, { shrinkBudgetMs: Number.NaN })).toThrow(/^retrysim: explainClient\(fetch-retry-client\): shrinkBudgetMs must be/);
  });
});

describe('retrysim/vitest and check --service: one bug, one counterexample', () => {
  it('the same service, seed and faults give the same counterexample file, byte for byte (ttl-from-date-now, seed 2: the helper shrank it to 2 workers where the CLI has 1)', async () => {
    const dir = tmp('rs-vitest-same-');
    const module = 'examples/ttl-from-date-now/service.ts';
    const cli = await runMain(['check', '--service', module, '--seed', '2', '--runs', '300', '--found', join(dir, 'cli'), '--json']);
    expect(cli.code, cli.err).toBe(1);
    const fromCli = (JSON.parse(cli.out) as { counterexample: string }).counterexample;
    // The property as the example writes it: every violation fails it (what check --service judges).
    const prop = fc.asyncProperty(serviceCases(ttl, { module: new URL('../examples/ttl-from-date-now/service.ts', import.meta.url) }), async (c) => {
      expect((await runServiceCase(ttl, c)).violations).toEqual([]);
    });
    const msg = await failure(fc.assert(prop, { ...replayable(ttl, { foundDir: join(dir, 'helper') }), numRuns: 300, seed: 2 }));
    const fromHelper = /written to (\S+)/.exec(msg)![1]!;
    expectSameCase(fromHelper, fromCli, `Found by a vitest property (retrysim's vitest helper, seed 2; replay with retrysim replay --service ${module} <this file>)`, `Found by retrysim check --service ${module} (seed 2)`);
  });

  it('a client: explainClient and check --client give the same file for the same seed (the fixed fetch client against lease-without-fencing, seed 2: 81 shrink candidates, past the services\' cap of 40)', async () => {
    const dir = tmp('rs-vitest-same-');
    const module = 'examples/fetch-retry-client/client.ts';
    const service = 'examples/lease-without-fencing/service.ts';
    const cli = await runMain(['check', '--client', module, '--name', fixedClient.name, '--service', service, '--seed', '2', '--runs', '300', '--found', join(dir, 'cli'), '--json']);
    expect(cli.code, cli.err).toBe(1);
    const fromCli = (JSON.parse(cli.out) as { counterexample: string }).counterexample;
    const prop = fc.asyncProperty(clientCases({ service: lease, module: service }), async (c) => (await runClientCase(fixedClient, c)).violations.length === 0);
    const msg = await failure(fc.assert(prop, { ...explainClient(fixedClient, { module, foundDir: join(dir, 'helper') }), numRuns: 300, seed: 2 }));
    const fromHelper = /written to (\S+)/.exec(msg)![1]!;
    expectSameCase(fromHelper, fromCli, `Found for retry client '${fixedClient.name}' by a vitest property (retrysim's vitest helper, seed 2; replay with retrysim replay --client ${module} <this file>)`, `Found for retry client '${fixedClient.name}' (seed 2)`);
  });
});

/**
 * The helper's file is the CLI's, byte for byte, but for what found it: its
 * description says a vitest property where the CLI's says `retrysim check`
 * (the rest of the description is the same), and so the content hash in its
 * name differs.
 */
function expectSameCase(fromHelper: string, fromCli: string, helperFoundBy: string, cliFoundBy: string): void {
  const read = (f: string) => JSON.parse(readFileSync(f, 'utf8')) as { description: string };
  const [h, c] = [read(fromHelper), read(fromCli)];
  expect(h.description.startsWith(`${helperFoundBy}: `), h.description).toBe(true);
  expect(c.description.startsWith(`${cliFoundBy}: `), c.description).toBe(true);
  expect(h.description.slice(helperFoundBy.length)).toBe(c.description.slice(cliFoundBy.length));
  expect({ ...h, description: '' }).toEqual({ ...c, description: '' });
  const stem = (f: string) => f.split('/').at(-1)!.replace(/-[0-9a-f]{8}\.json$/, '');
  expect(stem(fromHelper)).toBe(stem(fromCli));
}

describe('two properties on one service with different shrink limits', () => {
  it('are refused in one line naming the way out (a copy of the service per property), not silently given the last one\'s', () => {
    const svc = { ...ttl }; // an object of this test's own (another test's limits are not its business)
    replayable(svc, { shrinkBudgetMs: 60_000 });
    expect(() => replayable(svc, { shrinkBudgetMs: 60_000 })).not.toThrow(); // the same limits again: fine
    expect(() => replayable(svc, { shrinkBudgetMs: 1 })).toThrow(/^retrysim: replayable\(ttl-from-date-now\): another property already set this object's shrink limits \(shrinkBudgetMs 60000 here 1, or another clockMs\); .* \(Object\.create\(object\): a class instance keeps its methods, as \{ \.\.\.object \} does not\)/);
    const copy = Object.create(svc) as typeof svc;
    expect(() => replayable(copy, { shrinkBudgetMs: 1 })).not.toThrow();
    const client = { ...fixedClient };
    explainClient(client, { shrinkBudgetMs: 5 });
    expect(() => explainClient(client, { shrinkBudgetMs: 6 })).toThrow(/explainClient\(.*\): another property already set/);
  });
});
