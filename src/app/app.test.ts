import { randomBytes, randomUUID as nodeUuid } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadService } from '../service/load.js';
import { runServiceCampaign } from '../service/campaign.js';
import { ServiceError } from '../service/errors.js';
import { runScenario } from '../scenario/run.js';
import { loadScenario, parseScenario } from '../scenario/load.js';
import { plantNxAsGetThenSet } from '../kv/client.js';
import { appService } from './define.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { runMain } from '../testing/cli.js';

const tmp = tempDirs();
afterEach(() => plantNxAsGetThenSet(false));

describe('an unmodified node:http app on the simulated key-value store', () => {
  it('check-then-insert is refuted on exactly-one; the written file replays to the same trace, and the same seed writes the same file', async () => {
    const module = 'examples/app-plain-http/app.ts';
    const def = await loadService(module);
    const runOnce = async () => {
      const dir = tmp('rs-app-');
      const r = await runServiceCampaign({ def, module, runs: 200, seed: 7, foundDir: dir });
      return r;
    };
    const a = await runOnce();
    expect(a.verdict).toBe('fails');
    const cx = a.counterexample!;
    expect(cx.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(cx.size.operations).toBe(1);
    const b = await runOnce();
    expect(readFileSync(b.counterexample!.file!, 'utf8')).toBe(readFileSync(cx.file!, 'utf8'));
    const s = loadScenario(cx.file!);
    const first = await runScenario(s, { strictReplay: true, service: def });
    const second = await runScenario(s, { strictReplay: true, service: def });
    expect(first.violations.map((v) => v.invariant)).toEqual(s.expect!.violations);
    expect(second.result.traceHash).toBe(first.result.traceHash);
  }, 60_000);

  it('a SET NX claim holds; the canary store (NX as GET then SET) makes the same app fail exactly-one', async () => {
    const module = 'examples/app-plain-http/app-claim.ts';
    const def = await loadService(module);
    const ok = await runServiceCampaign({ def, module, runs: 100, seed: 3 });
    expect(ok.verdict).toBe('holds');
    plantNxAsGetThenSet(true);
    const bad = await runServiceCampaign({ def, module, runs: 300, seed: 3 });
    expect(bad.verdict).toBe('fails');
    expect(bad.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 60_000);

  it("the store's TTLs run on the store's clock, not the calling instance's skewed one: a SET NX PX claim from a clock 10 s behind still holds the key", async () => {
    const def = appService({
      name: 'skewed-claim',
      app: ({ redis }) => async (_req, res) => {
        // A 5 s lock: were it judged by a clock 10 s behind, it would have expired before it was set.
        if ((await redis.set('lock', 'x', { NX: true, PX: 5_000 })) === null) {
          res.statusCode = 409;
          res.end('{"error":"in progress"}');
          return;
        }
        const id = await redis.incr('seq');
        await redis.set(`order:${id}`, 'op1');
        res.statusCode = 201;
        res.end(JSON.stringify({ id }));
      },
      operation: { path: '/x', body: (op) => JSON.stringify({ op: op.runId }) },
      effects: { noun: 'order', of: (kv) => kv.scan('order:').map(([k]) => Number(k.slice(6))) },
    });
    // Either instance may be the one behind, so either may claim first.
    for (const clockOffsetMs of [[0, -10_000], [-10_000, 0]]) {
      const s = parseScenario(JSON.stringify({
        format: 'retrysim.scenario/2', name: 'skew', seed: 3, service: { module: 'skewed-claim', instances: 2, clockOffsetMs },
        client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }], expect: {},
      }));
      const r = await runScenario(s, { service: def, keepTrace: true });
      // Both workers reach the store, one on each instance; only one claims the lock.
      expect(new Set(r.trace.filter((l) => / kv\.set /.test(l)).map((l) => l.trim().split(/\s+/)[2]!.split('/')[0]))).toEqual(new Set(['s0', 's1']));
      expect(r.reports.op1).toBe(1);
      expect(r.violations).toEqual([]);
    }
  });

  it('a cleanup job the app factory starts (setInterval) fires in a request\'s turn; the trace says its store command is the job\'s, not that request\'s', async () => {
    const def = appService({
      name: 'sweeper',
      app: ({ redis }) => {
        const claimedAt = new Map<string, number>();
        // The bug the job carries: a claim held 1 s is taken for a dead request's, and deleted.
        setInterval(() => {
          for (const [k, t] of claimedAt) if (Date.now() - t > 1_000) (claimedAt.delete(k), void redis.del(k));
        }, 500);
        return async (req, res) => {
          const key = `idem:${String(req.headers['idempotency-key'])}`;
          if ((await redis.set(key, 'in_progress', { NX: true })) === null) {
            res.statusCode = 409;
            res.end('{"error":"in progress"}');
            return;
          }
          claimedAt.set(key, Date.now());
          const id = await redis.incr('seq');
          await redis.set(`order:${id}`, 'op1');
          claimedAt.delete(key);
          res.statusCode = 201;
          res.end(JSON.stringify({ id }));
        };
      },
      operation: { path: '/x', body: (op) => JSON.stringify({ op: op.runId }) },
      effects: { noun: 'order', of: (kv) => kv.scan('order:').map(([k]) => Number(k.slice(6))) },
    });
    // One request, slow for 2.5 s at its INCR (its claim taken): the job's ticks come due while it waits, and fire when it resumes.
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'sweep', seed: 1, service: { module: 'sweeper' },
      client: { keySource: 'tool_call', maxAttempts: 1 }, faults: { slowMs: 2_500, slowAtStep: 'kv.incr' },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
    }));
    const r = await runScenario(s, { service: def, keepTrace: true });
    const at = r.trace.findIndex((l) => / s0\/op1\.w0#1 +setInterval callback of the app \(not this request\) sends kv\.del$/.test(l));
    expect(at, r.trace.join('\n')).toBeGreaterThan(0);
    expect(r.trace[at + 1]).toMatch(/ s0\/op1\.w0#1 +kv\.del idem:r1:call-1 → 1$/); // with its key and answer
    // The request's own commands carry no such line.
    expect(r.trace.filter((l) => /callback of the app/.test(l))).toHaveLength(1);
  });

  it('an app that waits on something outside the simulation is a broken app (a ServiceError naming the request), not a hang', async () => {
    const def = appService({
      name: 'stuck',
      app: () => () => new Promise(() => undefined), // never answers and never asks the store or a timer
      operation: { path: '/x', body: (op) => JSON.stringify({ op: op.runId }) },
      effects: { of: () => [] },
    });
    await expect(runServiceCampaign({ def, module: 'stuck', runs: 1, seed: 1 })).rejects.toThrow(ServiceError);
    await expect(runServiceCampaign({ def, module: 'stuck', runs: 1, seed: 1 })).rejects.toThrow(/never answered POST \/x/);
  });

  it('app code reads the instance clock and seeded randomness, never the machine\'s', async () => {
    const seen: Array<[number, number, string, string, string]> = [];
    const def = appService({
      name: 'clocky',
      app: ({ redis }) => async (_req, res) => {
        await new Promise((r) => setTimeout(r, 250)); // real-time: allowed (the app's own timer, on virtual time)
        await redis.incr('n');
        seen.push([Date.now(), Math.random(), crypto.randomUUID(), nodeUuid(), randomBytes(8).toString('hex')]); // real-time: allowed (app code under test; node:crypto as apps usually mint ids)
        res.end('{"id":1}');
      },
      operation: { path: '/x', body: (op) => JSON.stringify({ op: op.runId }) },
      effects: { of: (kv) => (kv.get('n') === null ? [] : [1]) },
    });
    const run = async () => {
      seen.length = 0;
      await runServiceCampaign({ def, module: 'clocky', runs: 1, seed: 5, faults: [] });
      return [...seen];
    };
    const a = await run();
    const b = await run();
    expect(a.length).toBeGreaterThan(0);
    expect(b).toEqual(a);
    // 2026-01-01 plus a few virtual seconds at most: the 250 ms timer ran on virtual time.
    expect(a[0]![0]).toBeGreaterThanOrEqual(Date.UTC(2026, 0, 1) + 250);
    expect(a[0]![0]).toBeLessThan(Date.UTC(2026, 0, 1) + 60_000);
  });
});

describe('retrysim check --app', () => {
  const cli = (args: string[]) => runMain(args);

  it('runs an app module through the service path: the verdict, the file, and the exit code agree', async () => {
    const r = await cli(['check', '--app', 'examples/app-plain-http/app.ts', '--runs', '50', '--expect', 'refuted', '--found', tmp('rs-app-cli-'), '--json']);
    const j = JSON.parse(r.out) as { verdict: string; counterexample: string | null };
    expect(j.verdict, r.err).toBe('fails');
    expect(j.counterexample).not.toBeNull();
    expect(r.code).toBe(0);
  }, 60_000);

  it('speaks of --app as the user typed it: the header, the reproduce line and the replay line say --app, and the replay line runs as printed', async () => {
    const found = tmp('rs-app-flag-');
    const pages = tmp('rs-app-pages-');
    const r = await cli(['check', '--app', 'examples/app-plain-http/app.ts', '--runs', '50', '--found', found, '--html', pages]);
    expect(r.code, r.err).toBe(1);
    expect(readFileSync(join(pages, 'index.html'), 'utf8')).toContain('<h1>app orders-check-then-insert (examples/app-plain-http/app.ts)</h1>');
    expect(r.out).toMatch(/^retrysim check --app examples\/app-plain-http\/app\.ts — app orders-check-then-insert, seed 1/m);
    expect(r.out).toMatch(/^reproduce: retrysim check --app examples\/app-plain-http\/app\.ts --seed 1 --runs 50$/m);
    expect(r.out).not.toContain('--service');
    expect(r.out).toContain('│   │ app / key source'); // the table's column names what was checked
    const replay = /^ {2}replay: retrysim (replay --app \S+ \S+ --trace)$/m.exec(r.out);
    expect(replay, r.out).not.toBeNull();
    // The file says how it was found in the same words: the command the user ran, --app.
    const file = loadScenario(replay![1]!.split(' ')[3]!);
    expect(file.description).toMatch(/^Found by retrysim check --app examples\/app-plain-http\/app\.ts \(seed 1\): exactly-one/);
    const again = await cli(replay![1]!.split(' '));
    expect(again.code, again.err).toBe(0);
    expect(again.out).toMatch(/expect: met/);
    expect(again.out).not.toContain('--service');
    // replay --html: the page's reproduce line is the command that reproduces the run (--app and the module
    // included), the one the text replay prints first; pasted, it runs.
    const page = join(tmp('rs-app-replay-page-'), 'run.html');
    const drawn = await cli([...replay![1]!.split(' '), '--html', page]);
    expect(drawn.code, drawn.err).toBe(0);
    const data = JSON.parse(/<script type="application\/json" id="retrysim-data">(.*?)<\/script>/s.exec(readFileSync(page, 'utf8'))![1]!) as { replay: string };
    expect(data.replay).toBe(`retrysim ${replay![1]!}`);
    expect(drawn.out.split('\n')[0]).toBe(`retrysim ${replay![1]!.replace(/ --trace$/, '')}`);
    expect(drawn.out.split('\n')[1]).toMatch(/^scenario: .* — run seed \d+, app orders-check-then-insert \(examples\/app-plain-http\/app\.ts\), one key per operation$/);
    const pasted = await cli(data.replay.split(' ').slice(1));
    expect(pasted.code, pasted.err).toBe(0);
  }, 60_000);

  it('coverage speaks of the store commands the app sends: none at a command it never sends (kv.pTTL, kv.putIf), and a preemption is "before" a command, not "between" two', async () => {
    const r = await cli(['check', '--app', 'examples/app-plain-http/app-claim.ts', '--runs', '100', '--found', tmp('rs-app-cov-'), '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; coverage: { rows: Array<{ id: string; what: string; runs: number }> }; neverReached: string[] };
    expect(j.verdict).toBe('holds');
    const ids = j.coverage.rows.map((x) => x.id);
    // The commands it sends are there, with a fault at each.
    expect(ids).toEqual(expect.arrayContaining(['pause@kv.set', 'kill@kv.incr', 'crash@kv.get: answer lost', 'preempt@kv.set']));
    // app-claim never sends PEXPIRE, PTTL or a conditional put: nothing is said about faults there.
    expect(ids.filter((x) => /kv\.(pexpire|pttl|putIf)/.test(x))).toEqual([]);
    expect(j.neverReached.filter((x) => /kv\.(pexpire|pttl|putIf)/.test(x))).toEqual([]);
    // The per-run bookkeeping of steps is not a row of its own.
    expect(ids.filter((x) => x.startsWith('step:'))).toEqual([]);
    expect(j.coverage.rows.map((x) => x.what).filter((w) => w.includes('between'))).toEqual([]);
    expect(j.coverage.rows.find((x) => x.id === 'preempt@kv.get')?.what).toBe('a preemption before kv.get');
  }, 60_000);

  it('a descriptor without effects is bad input: one line naming it, exit 2', async () => {
    const dir = tmp('rs-app-bad-');
    const file = join(dir, 'app.mjs');
    writeFileSync(file, "export default { name: 'bad', app: () => (req, res) => res.end('{}'), operation: { path: '/x', body: () => '{}' } };\n");
    const r = await cli(['check', '--app', file, '--runs', '5']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/effects\.of/);
  });
});
