import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const cli = (args: string[]) => runMain(args);

afterEach(() => vi.restoreAllMocks());

const g = globalThis as { __retrysimOutsideImported?: number };

/** A copy of the two-transactions service outside the working directory that counts its imports. */
function outsideService(): string {
  const dir = tmp('outside-');
  const src = readFileSync('examples/two-transactions/service.ts', 'utf8');
  const file = join(dir, 'service.ts');
  writeFileSync(file, `${src}\n(globalThis as { __retrysimOutsideImported?: number }).__retrysimOutsideImported = ((globalThis as { __retrysimOutsideImported?: number }).__retrysimOutsideImported ?? 0) + 1;\n`);
  return file;
}

describe('replay imports only modules the user chose', () => {
  it('a file naming a module outside this directory is refused before any import, with the command to run; --service runs it', async () => {
    const found = tmp('found-');
    const made = await cli(['check', '--service', 'examples/two-transactions/service.ts', '--faults', 'crash', '--runs', '300', '--found', found, '--json']);
    const file = (JSON.parse(made.out) as { counterexample: string }).counterexample;
    // Inside this directory tree: replays as it is.
    expect((await cli(['replay', file])).code).toBe(0);

    // A fresh copy per form: a module already loaded is not imported again, so one file would count 0 the second time.
    for (const relativePath of [false, true]) {
      const outside = outsideService();
      const module = relativePath ? relative(process.cwd(), outside) : outside;
      const s = JSON.parse(readFileSync(file, 'utf8')) as { service: { module: string } };
      s.service.module = module;
      const moved = join(found, `moved-${module.startsWith('/') ? 'abs' : 'rel'}.json`);
      writeFileSync(moved, JSON.stringify(s, null, 2));
      g.__retrysimOutsideImported = 0;
      const r = await cli(['replay', moved]);
      expect(r.code).toBe(2);
      expect(r.err.split('\n')).toHaveLength(1);
      expect(r.err).toContain(`names service module '${module}', outside this directory`);
      expect(r.err).toContain(`retrysim replay --service ${module} ${moved}`);
      expect(g.__retrysimOutsideImported).toBe(0);
      // Named on the command line, it runs.
      const ok = await cli(['replay', '--service', module, moved]);
      expect(ok.code, ok.err).toBe(0);
      expect(g.__retrysimOutsideImported).toBeGreaterThan(0);
    }
  });

  it('a client file naming a client module outside this directory is refused the same way', async () => {
    const found = tmp('found-');
    const made = await cli(['check', '--client', 'examples/fetch-retry-client/client.ts', '--runs', '300', '--found', found, '--json']);
    const j = JSON.parse(made.out) as { counterexample: string | null };
    expect(j.counterexample, made.err).not.toBeNull();
    const dir = tmp('outside-client-');
    const client = join(dir, 'client.ts');
    copyFileSync('examples/fetch-retry-client/client.ts', client);
    const s = JSON.parse(readFileSync(j.counterexample!, 'utf8')) as { client: { module: string } };
    s.client.module = client;
    const moved = join(found, 'moved-client.json');
    writeFileSync(moved, JSON.stringify(s, null, 2));
    const r = await cli(['replay', moved]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`names client module '${client}', outside this directory`);
    expect(r.err).toContain(`retrysim replay --client ${client} ${moved}`);
    expect((await cli(['replay', '--client', client, moved])).code).toBe(0);
  });
});

describe("replay of a user service's file speaks its words", () => {
  it('an expect that is not met counts the effects in the service noun, not reports', async () => {
    const dir = tmp('rs-replay-noun-');
    const file = join(dir, 'orders.json');
    // examples/two-transactions files orders; one operation, no fault: one order, where the file expects two.
    writeFileSync(file, JSON.stringify({
      format: 'retrysim.scenario/2', name: 'one order', seed: 1,
      service: { module: 'examples/two-transactions/service.ts' }, client: { keySource: 'tool_call' },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }],
      expect: { reports: { op1: 2 }, violations: [] },
    }));
    const r = await cli(['replay', file]);
    expect(r.code).toBe(1);
    expect(r.out).toContain('operation op1: expected 2 orders, got 1');
    expect(r.out).not.toMatch(/report/);
  });
});

describe('replay lists each attempt under the worker that sent it', () => {
  it('two workers of one operation make the same call: their attempts are told apart (op1.w0, op1.w1), not both op1 call-1#1', async () => {
    const r = await cli(['replay', 'scenarios/found/key_split-exactly-one-b78c4ffb.json']);
    const attempts = r.out.slice(r.out.indexOf('attempts:')).split('\n').slice(1, 3).map((l) => l.trim().split(' ').slice(0, 2).join(' '));
    expect(attempts.sort()).toEqual(['op1.w0 call-1#1', 'op1.w1 call-1#1']);
  });
});

describe('replay --trace shows the recovery phase a progress violation is judged on', () => {
  it('a progress counterexample prints the resubmissions after the faults stopped, not only the main run', async () => {
    const found = tmp('found-progress-');
    const made = await cli(['check', '--claim', 'key_atomic_no_expiry-tool_call-fails', '--runs', '300', '--found', found, '--json']);
    const row = (JSON.parse(made.out) as Array<{ counterexample: string | null }>)[0]!;
    expect(row.counterexample, made.err).not.toBeNull();
    const r = await cli(['replay', row.counterexample!, '--trace']);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/progress \(op1\): .*resubmission/);
    // The requests the violation counts are on the page: without them "18 resubmission(s) got no success" named nothing shown.
    expect(r.out).toContain('recovery (after the faults stopped');
    expect(r.out).toMatch(/s0\/recover\.op1#2 +answer 409/);
    // Without --trace, no timeline of either phase.
    expect((await cli(['replay', row.counterexample!])).out).not.toContain('recovery (after');
  }, 60_000);
});
