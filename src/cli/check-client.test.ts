import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';
import { clientCases, explainClient, runClientCase } from '../vitest.js';
import { buggyClient } from '../../examples/fetch-retry-client/client.js';
import { runCliProcess, runMain } from '../testing/cli.js';

const tmp = tempDirs();
const CLIENT = 'examples/fetch-retry-client/client.ts';

const cli = (...args: string[]) => runMain(args);
afterEach(() => vi.restoreAllMocks());

describe('retry client counterexamples are replayable files', () => {
  it('check --client refutes the buggy client, writes the file, and replay reproduces it (exit 0); a changed expect is exit 1, a changed schedule exit 3', async () => {
    const found = tmp('rs-client-found-');
    const r = await cli('check', '--client', CLIENT, '--found', found, '--expect', 'fails', '--json');
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { verdict: string; counterexample: string; violations: string[]; replay: string; shrunkSize: { operations: number; faults: number } };
    expect(j.verdict).toBe('fails');
    expect(j.violations).toContain('stable-key');
    expect(j.shrunkSize).toMatchObject({ operations: 1, faults: 1 });
    expect(j.counterexample.startsWith(found)).toBe(true);
    expect(j.replay).toBe(`retrysim replay --client ${CLIENT} ${j.counterexample} --trace`); // named: replay runs only modules inside the cwd unless told
    const file = JSON.parse(readFileSync(j.counterexample, 'utf8')) as { client: { module: string; name: string }; expect: { violations: string[] }; schedule: unknown[] };
    expect(file.client).toMatchObject({ module: CLIENT, name: 'fetch-retry-client' });

    const replayed = await cli('replay', j.counterexample, '--json');
    expect(replayed.code, replayed.err).toBe(0);
    const rj = JSON.parse(replayed.out) as { expectMet: boolean; violations: Array<{ invariant: string }>; traceHash: string };
    expect(rj.expectMet).toBe(true);
    expect(rj.violations.map((v) => v.invariant)).toEqual(file.expect.violations);
    // A second replay: the same trace (no hidden nondeterminism in the client's run).
    expect(JSON.parse((await cli('replay', j.counterexample, '--json')).out).traceHash).toBe(rj.traceHash);
    const text = await cli('replay', j.counterexample, '--trace');
    expect(text.code).toBe(0);
    // The first line is a command that reproduces it from anywhere: the client module named, as check's replay line names it.
    const first = text.out.split('\n')[0]!;
    expect(first).toBe(`retrysim replay --client ${CLIENT} ${j.counterexample}`);
    const pasted = await cli(...first.split(' ').slice(1));
    expect(pasted.code, pasted.err).toBe(0);
    expect(pasted.out.split('\n')[0]).toBe(first);
    expect(text.out).toMatch(/retry client 'fetch-retry-client' \(examples\/fetch-retry-client\/client\.ts\) against key_atomic/);
    expect(text.out).toMatch(/expect: met/);

    const notMet = join(found, 'not-met.json');
    writeFileSync(notMet, JSON.stringify({ ...file, expect: { violations: [] } }));
    const nm = await cli('replay', notMet);
    expect(nm.code).toBe(1);
    expect(nm.out).toMatch(/expect: NOT met\n\s+expected violations \[\], got \[.*stable-key.*\]/);

    const diverged = join(found, 'diverged.json');
    writeFileSync(diverged, JSON.stringify({ ...file, schedule: [{ t: 0, chosen: 1, of: ['op1.w0', 'nobody'], preempted: true }] }));
    const dv = await cli('replay', diverged);
    expect(dv.code, dv.err).toBe(3);
    expect(dv.err).toMatch(/diverged|never reache|differ/i);
    // With --trace the timeline up to the divergence is headed by the command that reproduces it, too.
    const dt = await cli('replay', diverged, '--trace');
    expect(dt.code).toBe(3);
    expect(dt.out.split('\n')[0]).toBe(`retrysim replay --client ${CLIENT} ${diverged}`);
  }, 120_000);

  it('a client that retries without waiting fails on backoff: exit 1, --json and the table name it, the file replays it (exit 0); its Full-Jitter twin holds', async () => {
    const HAMMER = 'src/client/fixtures/hammer-client.ts';
    const found = tmp('rs-client-backoff-');
    const r = await cli('check', '--client', HAMMER, '--found', found, '--json');
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; violations: string[]; firstFailureRun: number; firstFailureMs: number; counterexample: string };
    expect(j).toMatchObject({ verdict: 'fails', violations: ['backoff'] });
    expect(j.firstFailureRun).toBeLessThanOrEqual(10);
    // The wall time to it, as check --service --json gives (it was missing).
    expect(Number.isInteger(j.firstFailureMs) && j.firstFailureMs >= 0).toBe(true);
    const replayed = await cli('replay', j.counterexample);
    expect(replayed.code, replayed.err).toBe(0);
    expect(replayed.out).toMatch(/\n {2}backoff \(op1\): op1\.w0 retried \d+ times after \S+ (answers|outcomes) without waiting: attempts at t=[\d., ]+ ms\n/);
    const table = await cli('check', '--client', HAMMER, '--found', found);
    expect(table.code).toBe(1);
    expect(table.out).toMatch(/^ {2}backoff \(op1\): op1\.w0 retried /m);
    const jitter = await cli('check', '--client', HAMMER, '--name', 'full-jitter', '--found', found, '--json');
    expect(jitter.code, jitter.out).toBe(0);
  }, 120_000);

  it('--name picks the fixed client from the same module: it holds; a wrong name, a missing module or a built-in file with --client exit 2', async () => {
    const held = await cli('check', '--client', CLIENT, '--name', 'fetch-retry-client-fixed', '--runs', '100', '--found', tmp('rs-client-ok-'));
    expect(held.code, held.out + held.err).toBe(0);
    expect(held.out).toMatch(/fetch-retry-client-fixed .* holds/);
    const wrong = await cli('check', '--client', CLIENT, '--name', 'nope');
    expect(wrong.code).toBe(2);
    expect(wrong.err).toMatch(/client module 'examples\/fetch-retry-client\/client\.ts': exports no client named 'nope' \(it exports: 'fetch-retry-client', 'fetch-retry-client-fixed'\)/);
    const missing = await cli('check', '--client', 'examples/no-such/client.ts');
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot load: no such file/);
    const builtIn = await cli('replay', 'scenarios/canonical/lost_response/key_atomic--tool_call.json', '--client', CLIENT);
    expect(builtIn.code).toBe(2);
    expect(builtIn.err).toMatch(/runs the built-in harness, not a retry client/);
  }, 120_000);

  it('a holding client says what its runs reached (DESIGN invariant 9): the table, --json and the --html index', async () => {
    const pages = tmp('rs-client-cov-html-');
    const args = ['check', '--client', CLIENT, '--name', 'fetch-retry-client-fixed', '--runs', '150', '--found', tmp('rs-client-cov-')];
    const j = JSON.parse((await cli(...args, '--json', '--html', pages)).out) as { verdict: string; coverage: { runs: number; rows: { id: string; what: string; runs: number }[] } | null; neverReached: string[] };
    expect(j.verdict).toBe('holds');
    expect(j.coverage?.runs).toBe(150);
    const row = (id: string) => j.coverage!.rows.find((x) => x.id === id)!;
    // What a retry client meets: its own timeouts, a 429 with Retry-After, an answer it must not retry, retries, and the service's faults.
    for (const id of ['client:aborted', 'client:retry-after', 'client:non-retryable', 'client:retried', 'lose-after-commit', 'answer-lost', 'instance:second']) expect(row(id).runs, id).toBeGreaterThan(0);
    expect(j.neverReached).toEqual(j.coverage!.rows.filter((x) => x.runs === 0).map((x) => x.id));
    const text = await cli(...args);
    expect(text.code).toBe(0);
    expect(text.out).toContain('what the 150 run(s) reached:');
    expect(text.out).toMatch(/a call that sent its operation again +│ \d+/);
    expect(readFileSync(join(pages, 'index.html'), 'utf8')).toContain(`<tr><td>${row('client:retried').what}</td><td>${row('client:retried').runs}</td></tr>`);
  }, 120_000);

  it('a client whose state outlives a run (a module-level breaker) is named, exit 2, and no counterexample that would not replay is written', async () => {
    const found = tmp('rs-client-module-');
    const r = await cli('check', '--client', 'src/client/fixtures/module-breaker.ts', '--runs', '300', '--found', found, '--json');
    expect(r.code, r.out + r.err).toBe(2);
    // --json: the exit-2 object (it was nothing), no counterexample, nothing stopped.
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'error', ok: false, stopped: null, counterexample: null });
    expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
      expect.stringMatching(/^retrysim check: client 'module-breaker': its counterexample did not reproduce when replayed in a fresh process \(.+\): .*module level/),
    ]);
    // Its breaker opens after three calls gave up, which no client process of one run (one call each) reaches: per process it holds.
    expect(r.err).toContain('module state: with one load per client process the first 50 runs hold');
    // And the line says so, with the command that judges it as separate processes (not "keep it inside run()": a breaker spans calls by design).
    expect(r.err).toMatch(/its first 50 runs hold, so what failed it is state its calls share .*; for the verdict of separate processes on every run: RETRYSIM_APP_PER_PROCESS=1 retrysim check --client src\/client\/fixtures\/module-breaker\.ts --runs 300 --found \S+ --json$/m);
    expect(readdirSync(found)).toEqual([]);
  }, 120_000);

  it('a client whose failing case passes when rerun while shrinking (a retry budget shared by its calls): loaded once per client process it fails on its real bug (retry-after), exit 1', async () => {
    // Until 2026-12: exit 2 ("does not fail the same way twice"), no verdict. Each client process has its own
    // budget, and a fresh one per call retries — after a 429, without waiting the Retry-After it was given.
    const found = tmp('rs-client-budget-');
    const r = await cli('check', '--client', 'src/client/fixtures/shared-budget.ts', '--runs', '300', '--found', found, '--json');
    expect(r.code, r.out + r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; moduleLoads: string; violations: string[]; why: string[]; replay: string };
    expect(j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process', violations: ['retry-after'] });
    // Each call had its own module there: the failure is the client's own code, not where it keeps its budget.
    expect(j.why[0]).toMatch(/^client 'shared-budget' fails retry-after with its module loaded once per simulated client process, as separate client processes load it \(run \d+ of 50\): a failure of its own code — the campaign's first counterexample, .* did not reproduce in a fresh process$/);
    expect(j.why[0]).not.toContain('inside run()');
    // The file found on the per-process path says so (client.moduleLoads): its line, and the file alone, replay it.
    expect(j.replay).toMatch(/^retrysim replay --client src\/client\/fixtures\/shared-budget\.ts /);
    expect(readdirSync(found)).toHaveLength(1);
    const file = join(found, readdirSync(found)[0]!);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { client: { moduleLoads?: string } }).client.moduleLoads).toBe('per-process');
    vi.stubEnv('RETRYSIM_APP_PER_PROCESS', '');
    try {
      const again = await cli('replay', '--client', 'src/client/fixtures/shared-budget.ts', file, '--json');
      expect(again.code, again.err).toBe(0);
      expect(JSON.parse(again.out)).toMatchObject({ expectMet: true, moduleLoads: 'per-process' });
    } finally {
      vi.unstubAllEnvs();
    }
  }, 120_000);

  it('a client with a module-level breaker timed by Date.now (cockatiel\'s) over a retry of every error: fails non-retryable per process, and the line names the failure, not where the breaker is kept', async () => {
    // Until 2026-12 the line told it to "keep what one call needs inside run()": the breaker's place was not
    // the bug (a per-process failure is the client's own code); retrying a 400 was.
    const found = tmp('rs-client-clock-breaker-');
    const r = await cli('check', '--client', 'src/client/fixtures/clock-breaker.ts', '--runs', '100', '--found', found, '--json');
    expect(r.code, r.out + r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; moduleLoads: string; violations: string[]; why: string[] };
    expect(j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process', violations: ['non-retryable'] });
    expect(j.why[0]).toMatch(/^client 'clock-breaker' fails non-retryable with its module loaded once per simulated client process, as separate client processes load it \(run 1 of 50\): a failure of its own code/);
    expect(j.why[0]).not.toContain('inside run()');
  }, 120_000);

  it('a counterexample that meets its expect in a fresh process on another run (a module-level rate limiter holding an earlier run\'s instant) is not the one printed: the fresh processes\' verdict is, with times its replay shows', async () => {
    // Until 2026-12 only expect was compared: check printed attempts at t=30233.. ms (the limiter waited out an
    // earlier run's second on a clock that had started again), and the file's replay showed them at t=2.. ms.
    const found = tmp('rs-client-limiter-');
    const r = await cli('check', '--client', 'src/client/fixtures/module-limiter.ts', '--runs', '100', '--found', found, '--json');
    expect(r.code, r.out + r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; moduleLoads: string; violations: string[]; counterexample: string };
    expect(j).toMatchObject({ verdict: 'fails', moduleLoads: 'per-process', violations: ['backoff'] });
    const replay = runCliProcess(['replay', '--client', 'src/client/fixtures/module-limiter.ts', j.counterexample, '--json']);
    expect(replay.status, replay.stderr).toBe(0);
    const detail = (JSON.parse(replay.stdout) as { violations: Array<{ detail: string }> }).violations[0]!.detail;
    expect((JSON.parse(readFileSync(j.counterexample, 'utf8')) as { description: string }).description).toContain(detail);
  }, 120_000);

  it('a client tagging its requests with an id made at load and a module-level call number (values no check reads) reproduces in a fresh process: its own bug is reported, not module state', async () => {
    // Until 2026-12 the fresh-process replay was compared by trace hash, which covers every header's value:
    // x-client-instance differs between the campaign's process and a fresh one, and check said "state kept at
    // module level ... make the key per call" about a client whose bug is a key per attempt.
    const found = tmp('rs-client-instance-');
    const r = await cli('check', '--client', 'src/client/fixtures/instance-header.ts', '--found', found, '--json');
    expect(r.code, r.out + r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; moduleLoads: string; violations: string[]; why: string[]; counterexample: string };
    expect(j).toMatchObject({ verdict: 'fails', moduleLoads: 'once', violations: ['stable-key'] });
    expect(j.why.join(' ')).not.toContain('module level');
    expect(r.err).not.toContain('module state');
    const replay = runCliProcess(['replay', '--client', 'src/client/fixtures/instance-header.ts', j.counterexample, '--json']);
    expect(replay.status, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ expectMet: true, sentHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
  }, 120_000);

  it('a client whose failing case passes when rerun while shrinking, in a shard (no per-process probe there), is named in one line, exit 2, not an internal error', async () => {
    const found = tmp('rs-client-budget-');
    const r = await cli('check', '--client', 'src/client/fixtures/shared-budget.ts', '--runs', '300', '--found', found, '--shard', '1/1', '--out', join(tmp('rs-client-budget-out-'), 'shard.json'), '--json');
    expect(r.code, r.out + r.err).toBe(2);
    // --json: the exit-2 object (it was nothing), no counterexample, nothing stopped.
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'error', ok: false, stopped: null, counterexample: null });
    expect(r.err).not.toMatch(/internal error/);
    expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
      expect.stringMatching(/^retrysim check: client module 'src\/client\/fixtures\/shared-budget\.ts': client 'shared-budget' does not fail the same way twice on the same run \(.+\): .*a retry budget.*inside run\(\)/),
    ]);
    expect(readdirSync(found)).toEqual([]);
  }, 120_000);

  it('against an app (--app): the header says app and the reproduce line says --app, as typed (it printed --service)', async () => {
    const r = await cli('check', '--client', 'examples/fetch-retry-client/client.ts', '--name', 'fetch-retry-client-fixed', '--app', 'examples/app-plain-http/app-claim.ts', '--runs', '5', '--found', tmp('rs-client-app-'));
    expect(r.code, r.err).toBe(0);
    expect(r.out + r.err).toContain("against app orders-claim (examples/app-plain-http/app-claim.ts)");
    expect(r.out + r.err).toContain('reproduce: retrysim check --client examples/fetch-retry-client/client.ts --name fetch-retry-client-fixed --app examples/app-plain-http/app-claim.ts --runs 5');
  }, 60_000);

  it('explainClient (retrysim/vitest) writes the shrunk case as a file too; not told the module, it finds it, so the file names it and replays with no flag', async () => {
    const found = tmp('rs-client-vitest-');
    let message = '';
    try {
      await fc.assert(fc.asyncProperty(clientCases(), async (c) => (await runClientCase(buggyClient, c)).violations.length === 0), { ...explainClient(buggyClient, { foundDir: found }), numRuns: 300, seed: 1 });
    } catch (e) {
      message = (e as Error).message;
    }
    const m = /written to (\S+\.json)\n\s+replay: retrysim replay --client (\S+) (\S+) --trace/.exec(message);
    expect(m, message).not.toBeNull();
    expect(m![2]).toBe(CLIENT);
    const file = m![1]!;
    const without = await cli('replay', file);
    expect(without.code, without.err).toBe(0);
    expect(without.out).toMatch(/expect: met/);
  }, 120_000);

  it('explainClient on a client made in the test (no file exports it): the file names no module, replay asks for --client, and the line says how to name it', async () => {
    const found = tmp('rs-client-vitest-');
    const madeHere = { ...buggyClient, name: 'made-in-a-test' };
    let message = '';
    try {
      await fc.assert(fc.asyncProperty(clientCases(), async (c) => (await runClientCase(madeHere, c)).violations.length === 0), { ...explainClient(madeHere, { foundDir: found }), numRuns: 300, seed: 1 });
    } catch (e) {
      message = (e as Error).message;
    }
    const m = /written to (\S+\.json)\n\s+replay: retrysim replay --client <your client module> (\S+) --trace\n\s+\(the client's module could not be found from where its run\(\) is written; explainClient\(client, \{ module: new URL\('\.\/client\.ts', import\.meta\.url\) \}\) names it/.exec(message);
    expect(m, message).not.toBeNull();
    const without = await cli('replay', m![1]!);
    expect(without.code).toBe(2);
    expect(without.err).toMatch(/was found for retry client 'made-in-a-test' and does not name its module; pass --client PATH/);
  }, 120_000);

  it("replaying a file found against a user's service counts the effects in the service's own noun", async () => {
    const found = tmp('rs-client-noun-');
    const r = await cli('check', '--client', CLIENT, '--service', 'examples/correct-with-progress/service.ts', '--faults', 'loseAllAnswers', '--runs', '100', '--found', found, '--json');
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { counterexample: string };
    const text = await cli('replay', j.counterexample);
    expect(text.code, text.err).toBe(0);
    // Both modules on the first line (each taken from the file here): the line runs from any directory.
    expect(text.out.split('\n')[0]).toBe(`retrysim replay --client ${CLIENT} --service examples/correct-with-progress/service.ts ${j.counterexample}`);
    expect(text.out).toMatch(/^orders held: op1=\d+$/m);
    expect(text.out).not.toMatch(/effects held|reports held/);
  }, 120_000);

  it('--faults and --explore pct: the buggy client fails on lost answers alone, minimal, and the file replays; an unknown fault is exit 2 naming the valid ones', async () => {
    const found = tmp('rs-client-faults-');
    const r = await cli('check', '--client', CLIENT, '--faults', 'loseAllAnswers', '--explore', 'pct', '--found', found, '--json');
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; explore: string; faults: string[]; notMinimal: string[]; why: string[]; counterexample: string; shrunkSize: { faults: number; operations: number } };
    expect(j).toMatchObject({ verdict: 'fails', explore: 'pct', faults: ['loseAllAnswers'], notMinimal: [], why: ['expected holds, got fails'], shrunkSize: { operations: 1, faults: 1 } });
    const file = JSON.parse(readFileSync(j.counterexample, 'utf8')) as { network: { loseResponses: number }; faults: { crashMidRequest: number } };
    expect(file.network.loseResponses).toBe(1);
    expect((await cli('replay', j.counterexample)).code).toBe(0);
    const bad = await cli('check', '--client', CLIENT, '--faults', 'loseAllAnswers,teleport');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--faults: unknown fault 'teleport'; valid for a client: loseResponse, loseAllAnswers, crash,");
    // exhaustive runs now (src/client/exhaustive.test.ts); a mode that does not exist is exit 2.
    const ex = await cli('check', '--client', CLIENT, '--explore', 'bfs');
    expect(ex.code).toBe(2);
    expect(ex.err).toContain("--explore must be random, pct or exhaustive, got 'bfs'");
  }, 120_000);
});

describe('check --client --time-budget (a long client campaign is a flag away; fewer runs than a verdict needs is inconclusive)', () => {
  const fixed = ['check', '--client', CLIENT, '--name', 'fetch-retry-client-fixed'];

  it('a budget spent before the runs a verdict needs: inconclusive (exit 4); the reproduce line runs what ran, and there is none for 0 runs', async () => {
    const r = await cli(...fixed, '--time-budget', '1ms', '--json');
    expect(r.code).toBe(4);
    const j = JSON.parse(r.out) as { verdict: string; runs: number; ok: boolean; why: string[] };
    expect(j).toMatchObject({ verdict: 'inconclusive', ok: false });
    expect(j.runs).toBeLessThan(300);
    expect(j.why).toEqual([`inconclusive: ${j.runs} of 300 scenarios ran (the time budget ran out)`]);
    // How many runs fit in 1 ms depends on the machine: 0 on this one, where setting up takes longer.
    if (j.runs > 0) expect(r.err).toMatch(new RegExp(`^reproduce: retrysim check .* --runs ${j.runs}$`, 'm'));
    else expect(r.err).not.toMatch(/^reproduce:/m);
  });

  it('with --runs N the budget only bounds: N runs in time hold, and the reproduce line names them', async () => {
    const r = await cli(...fixed, '--runs', '20', '--time-budget', '1h');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/reproduce: retrysim check --client examples\/fetch-retry-client\/client\.ts --name fetch-retry-client-fixed --runs 20\n/);
    expect(r.out).toMatch(/│ ✓ │ fetch-retry-client-fixed │ 20 +│ holds/);
  });

  it('a bad duration, or a budget on an exhaustive search, is one line and exit 2', async () => {
    const bad = await cli(...fixed, '--time-budget', 'abc');
    expect(bad.code).toBe(2);
    expect(bad.err.trim()).toBe("retrysim check: --time-budget must be a duration such as 90s, 10m or 1h (more than 0, at most a week), got 'abc'");
    const ex = await cli(...fixed, '--time-budget', '1s', '--explore', 'exhaustive');
    expect(ex.code).toBe(2);
    expect(ex.err.trim()).toBe('retrysim check: --time-budget is for generated campaigns (random, pct), not --explore exhaustive');
  });
});

describe('check --client --shrink-budget (shrinking a failure has a wall-clock limit)', () => {
  it('a limit shrinking reaches stops it: the case in hand is written and replays, said not known to be minimal; the verdict is fails (exit 1)', async () => {
    const found = tmp('rs-client-shrink-');
    // A fake machine clock that jumps an hour at every read: the 60 s default has run out by the first
    // read after the failure is found, on any machine (the simulated client never reads it).
    let now = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => (now += 3_600_000));
    const r = await cli('check', '--client', CLIENT, '--found', found, '--json');
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; counterexample: string; notMinimal: string[]; minimised: { runs: number; removed: string[]; stopped?: { by: string; untried: string[] } } };
    expect(j.verdict).toBe('fails');
    expect(j.minimised).toMatchObject({ runs: 1, removed: [], stopped: { by: 'shrink budget 60 s' } });
    expect(j.notMinimal[0]).toBe('shrinking stopped at its time limit (shrink budget 60 s): not known to be minimal');
    const file = JSON.parse(readFileSync(j.counterexample, 'utf8')) as { description: string };
    expect(file.description).toContain('Not shown minimal: shrinking stopped at its time limit (shrink budget 60 s): not known to be minimal');
    const replayed = await cli('replay', '--client', CLIENT, j.counterexample, '--json');
    expect(replayed.code, replayed.err).toBe(0);
    expect(JSON.parse(replayed.out)).toMatchObject({ expectMet: true });
    // The text: the minimal column and a line of its own.
    vi.spyOn(performance, 'now').mockImplementation(() => (now += 3_600_000));
    const text = await cli('check', '--client', CLIENT, '--found', found, '--shrink-budget', '2m');
    expect(text.code).toBe(1);
    expect(text.out).toMatch(/│ ✗ │ fetch-retry-client +│ \d+ +│ fails +│ .* │ not shown \(time limit\) │/);
    expect(text.out).toContain('  not known to be minimal: shrinking stopped at its time limit (shrink budget 2 min); the counterexample fails and replays as written, and a longer --shrink-budget shrinks it further');
    const bad = await cli('check', '--client', CLIENT, '--shrink-budget', '-1s');
    expect(bad.code).toBe(2);
    expect(bad.err.trim()).toBe("retrysim check: --shrink-budget must be a duration such as 90s, 10m or 1h (more than 0, at most a week), got '-1s'");
  }, 60_000);
});

describe('a client whose requests never succeed', () => {
  const NEVER = 'src/client/fixtures/wrong-path-client.ts';
  // What came back, quoted (the wrong path's 404): it said only "serve the service and see".
  const WHY = 'no request of the 20 runs was answered 2xx (the first: op2.w0 POST /v2/items → 404 {"error":"no route for POST /v2/items"}), and a client that never succeeds keeps every check vacuously';
  it('is inconclusive (exit 4), not holds: the table, --json and a merge of shards say why, quoting the first answer, and no "to conclude" line offers more runs', async () => {
    const t = await cli('check', '--client', NEVER, '--runs', '20');
    expect(t.code, t.err).toBe(4);
    expect(t.out).toContain(`? inconclusive: ${WHY}`);
    expect(t.out).not.toContain('to conclude');
    const j = await cli('check', '--client', NEVER, '--runs', '20', '--json');
    expect(j.code).toBe(4);
    expect(JSON.parse(j.out) as { verdict: string; why: string[] }).toMatchObject({ verdict: 'inconclusive', why: [expect.stringContaining(`inconclusive: ${WHY}`)] });
    const ex = await cli('check', '--client', NEVER, '--explore', 'exhaustive', '--json');
    expect(ex.code).toBe(4);
    expect((JSON.parse(ex.out) as { why: string[] }).why[0]).toMatch(/^inconclusive: no request of the \d+ schedules was answered 2xx \(the first: op1\.w0 POST \/v2\/items → 404 \{"error":"no route for POST \/v2\/items"\}\)/);
    const dir = tmp('rs-client-never-');
    for (const i of [1, 2]) expect((await cli('check', '--client', NEVER, '--runs', '20', '--shard', `${i}/2`, '--out', join(dir, `s${i}.json`))).code).toBe(0);
    const m = await cli('merge', join(dir, 's1.json'), join(dir, 's2.json'), '--json');
    expect(m.code, m.err).toBe(4);
    expect(JSON.parse(m.out) as { verdict: string; why: string[] }).toMatchObject({ verdict: 'inconclusive', why: [expect.stringContaining(`inconclusive: ${WHY}`)] });
    // The canary's twin: the same campaign on a client that succeeds holds (exit 0).
    expect((await cli('check', '--client', CLIENT, '--name', 'fetch-retry-client-fixed', '--runs', '20')).code).toBe(0);
  }, 120_000);

  it('--html: the index says why, as the text does (it showed a ? alone)', async () => {
    const pages = tmp('rs-client-never-html-');
    expect((await cli('check', '--client', NEVER, '--runs', '20', '--html', pages)).code).toBe(4);
    expect(readFileSync(join(pages, 'index.html'), 'utf8')).toContain('<div class="reasons"><p>? inconclusive: no request of the 20 runs was answered 2xx (the first: op2.w0 POST /v2/items → 404 {&quot;error&quot;:&quot;no route for POST /v2/items&quot;}), and a client that never succeeds keeps every check vacuously');
  }, 60_000);
});
