import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const cli = (args: string[]) => runMain(args);

let found: string;
beforeEach(() => {
  found = tmp('found-');
});
afterEach(() => vi.restoreAllMocks());

describe('retrysim check --service and replay --service on the examples', () => {
  it.each([
    ['payments-check-then-insert', 'fails'],
    ['lease-without-fencing', 'fails'],
    ['payments-atomic', 'holds'],
  ] as const)('%s: %s; a counterexample is minimal and replays to its expect', async (name, verdict) => {
    const module = `examples/${name}/service.ts`;
    const r = await cli(['check', '--service', module, '--runs', verdict === 'holds' ? '3000' : '2000', '--expect', verdict, '--found', found, '--json']);
    const j = JSON.parse(r.out) as { verdict: string; ok: boolean; counterexample: string | null; shrunkSize: { operations: number; preemptions: number } | null; violations: string[]; preemptionsMinimal: boolean | null; notMinimal: string[] };
    expect(j.verdict, r.err).toBe(verdict);
    expect(r.code).toBe(0);
    expect(j.ok).toBe(true);
    if (verdict === 'holds') {
      expect(j.counterexample).toBeNull();
      // The same verdict without --expect: holds is exit 0.
      return;
    }
    expect(j.violations).toEqual(['exactly-one']);
    expect(j.shrunkSize!.operations).toBe(1);
    expect(j.preemptionsMinimal).toBe(true);
    expect(j.notMinimal).toEqual([]);
    const replay = await cli(['replay', '--service', module, j.counterexample!]);
    expect(replay.code, replay.out + replay.err).toBe(0);
    expect(replay.out).toContain('expect: met');
    // The file names its module, so a plain replay works too.
    expect((await cli(['replay', j.counterexample!])).code).toBe(0);
    // Without --expect, a failing service is exit 1, in the table and in --json alike.
    const plain = await cli(['check', '--service', module, '--runs', '2000', '--found', found, '--json']);
    expect(plain.code).toBe(1);
    expect(JSON.parse(plain.out).ok).toBe(false);
    // What it expected is what its why and exit code say: holds.
    expect(JSON.parse(plain.out)).toMatchObject({ expected: 'holds', why: ['expected holds, got fails'] });
  });

  it('a service that declares no progress: its "holds" says progress was not judged (table, --json); the same service declaring progress fails it after a kill', async () => {
    const quiet = await cli(['check', '--service', 'src/service/fixtures/stuck-after-kill.ts', '--runs', '300', '--found', found]);
    expect(quiet.code, quiet.out + quiet.err).toBe(0);
    expect(quiet.out).toContain('never reached (the verdict says nothing about these): recovery after the faults stopped (no `progress` declared)');
    expect(quiet.out).toContain('progress (invariant 5) was not judged: no `progress` is declared');
    expect(quiet.out).not.toContain('every situation of its fault space was reached');
    const j = JSON.parse((await cli(['check', '--service', 'src/service/fixtures/stuck-after-kill.ts', '--runs', '300', '--found', found, '--json'])).out) as { verdict: string; neverReached: string[] };
    expect(j.verdict).toBe('holds');
    expect(j.neverReached).toEqual(['recovery:not-declared']);
    // What that "holds" left out: a kill between claim and commit leaves the key busy for ever.
    const judged = await cli(['check', '--service', 'src/service/fixtures/stuck-after-kill-progress.ts', '--runs', '300', '--found', found, '--json']);
    expect(judged.code, judged.err).toBe(1);
    expect(JSON.parse(judged.out)).toMatchObject({ verdict: 'fails', violations: ['progress'] });
    // A service that declares progress has the recovery rows instead, and no such line.
    const declared = await cli(['check', '--service', 'examples/correct-with-progress/service.ts', '--runs', '300', '--found', found]);
    expect(declared.out).not.toContain('was not judged');
    expect(declared.out).toContain('recovery: a resubmission after the faults stopped');
  }, 120_000);

  it('a service whose state outlives a run (a module-level Map) is named, exit 2, and no counterexample that would not replay is written', async () => {
    const html = tmp('html-');
    const r = await cli(['check', '--service', 'src/service/fixtures/module-map.ts', '--runs', '50', '--found', found, '--html', html, '--json']);
    expect(r.code, r.out + r.err).toBe(2);
    // --json: the exit-2 object, saying what the stderr line says; no counterexample, no file, no page.
    const stop = r.err.split('\n').find((l) => l.startsWith('retrysim check:'))!;
    expect(JSON.parse(r.out)).toMatchObject({ service: 'module-map', verdict: 'error', ok: false, error: stop.replace('retrysim check: ', ''), stopped: null, counterexample: null });
    expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
      expect.stringMatching(/^retrysim check: service 'module-map': its counterexample did not reproduce when replayed in a fresh process \(.+\): .*module level.*memory\(\)/),
    ]);
    expect(readdirSync(found)).toEqual([]);
    expect(readdirSync(html)).toEqual([]);
  }, 60_000);

  it('a service whose failing case passes when rerun while shrinking (a quota at module level) is named in one line, exit 2, not an internal error', async () => {
    const r = await cli(['check', '--service', 'src/service/fixtures/module-quota.ts', '--runs', '300', '--found', found, '--json']);
    expect(r.code, r.out + r.err).toBe(2);
    // --json: the exit-2 object (it was nothing), no counterexample, nothing stopped.
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'error', ok: false, stopped: null, counterexample: null });
    expect(r.err).not.toMatch(/internal error/);
    expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
      expect.stringMatching(/^retrysim check: service 'module-quota': does not fail the same way twice on the same run \(.+\): .*module level.*memory\(\)/),
    ]);
    expect(readdirSync(found)).toEqual([]);
  }, 60_000);

  it('a bad service path or flag is one line and exit 2', async () => {
    const r = await cli(['check', '--service', 'examples/nope/service.ts', '--found', found]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^retrysim check: service 'examples\/nope\/service.ts': cannot load: no such file/);
    const k = await cli(['check', '--service', 'examples/payments-atomic/service.ts', '--key-source', 'nope']);
    expect(k.code).toBe(2);
    expect(k.err).toContain("--key-source must be one of none, per_attempt, tool_call, business, got 'nope'");
  });

  it('--faults restricts the fault space: two-transactions with crashes only shrinks to the crash window', async () => {
    const module = 'examples/two-transactions/service.ts';
    const r = await cli(['check', '--service', module, '--faults', 'crash', '--runs', '500', '--found', found, '--json']);
    const j = JSON.parse(r.out) as { verdict: string; faults: string[]; shrunkSize: { operations: number; workers: number; faults: number; preemptions: number }; counterexample: string; notMinimal: string[] };
    expect(r.code).toBe(1);
    expect(j.verdict).toBe('fails');
    expect(j.faults).toEqual(['crash']);
    expect(j.shrunkSize).toMatchObject({ operations: 1, workers: 1, faults: 1, preemptions: 0 });
    expect(j.notMinimal).toEqual([]);
    expect((await cli(['replay', '--service', module, j.counterexample])).code).toBe(0);
    // Unknown names: exit 2, naming the valid ones; nothing written.
    const bad = await cli(['check', '--service', module, '--faults', 'crash,teleport', '--found', found]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("--faults: unknown fault 'teleport'; valid for service two-transactions: loseResponse, crash,");
    const noCrash = await cli(['check', '--service', 'examples/lease-without-fencing/service.ts', '--faults', 'crash', '--found', found]);
    expect(noCrash.code).toBe(2);
    expect(noCrash.err).toContain('declares no crash points');
  });

  it('--explore exhaustive: a failure is minimised and replays; a search stopped by its limit is inconclusive (exit 4), never ✓', async () => {
    const module = 'examples/two-transactions/service.ts';
    const r = await cli(['check', '--service', module, '--explore', 'exhaustive', '--faults', 'crash', '--found', found, '--json']);
    const j = JSON.parse(r.out) as { verdict: string; explore: string; counterexample: string; shrunkSize: { workers: number; faults: number } };
    expect(r.code).toBe(1);
    expect(j).toMatchObject({ verdict: 'fails', explore: 'exhaustive', shrunkSize: { workers: 1, faults: 1 } });
    expect((await cli(['replay', j.counterexample])).code).toBe(0);
    const held = await cli(['check', '--service', 'examples/payments-atomic/service.ts', '--explore', 'exhaustive', '--found', found, '--json']);
    const h = JSON.parse(held.out) as { verdict: string; complete: boolean; ok: boolean };
    expect(h).toMatchObject({ verdict: 'holds', complete: true, ok: true });
    expect(held.code).toBe(0);
    const cut = await cli(['check', '--service', 'examples/payments-atomic/service.ts', '--explore', 'exhaustive', '--runs', '2', '--found', found]);
    expect(cut.code).toBe(4);
    // The row is ?, as in check's table and the --html index: not ✓ (it did not hold), not ✗ (nothing failed).
    expect(cut.out).toMatch(/│ \? │ payments-atomic \/ one key per operation .* inconclusive/);
    expect(cut.out).toMatch(/^\? inconclusive: the schedule limit \(2 per small scenario\)/m);
    expect(cut.out).not.toContain('✓');
    expect(cut.out).not.toMatch(/│ ✗ │|^✗ /m);
    // The printed command that finishes the search runs as printed and concludes.
    const conclude = /^to conclude: raise the schedule limit, e.g. retrysim (check .*)$/m.exec(cut.out)![1]!.split(' ');
    expect(conclude).toEqual(['check', '--service', 'examples/payments-atomic/service.ts', '--seed', '1', '--runs', '1000', '--explore', 'exhaustive']);
    const done = await cli([...conclude, '--found', found, '--json']);
    expect(done.code, done.err).toBe(0);
    expect(JSON.parse(done.out)).toMatchObject({ verdict: 'holds', complete: true });
  });

  it('--time-budget: a budget that runs out before the count a verdict needs is inconclusive (exit 4), and the reproduce line runs what ran', async () => {
    const short = await cli(['check', '--service', 'examples/payments-atomic/service.ts', '--time-budget', '1ms', '--found', found, '--json']);
    expect(short.code, short.err).toBe(4);
    const j = JSON.parse(short.out) as { verdict: string; runs: number; timeBudgetMs: number; why: string[] };
    expect(j.verdict).toBe('inconclusive');
    expect(j.timeBudgetMs).toBe(1);
    expect(j.runs).toBeLessThan(10_000);
    expect(j.why[0]).toBe(`inconclusive: ${j.runs} of 10000 scenarios ran (the time budget ran out)`);
    // The reproduce line runs what ran; when the budget ran out before the first run there is nothing to reproduce (no `--runs 0`, which no command takes).
    if (j.runs > 0) expect(short.err.split('\n')).toContain(`reproduce: retrysim check --service examples/payments-atomic/service.ts --seed 1 --runs ${j.runs}`);
    else expect(short.err).not.toMatch(/^reproduce:/m);
    // Enough runs within the budget hold; a failure within it fails, shrunk as ever.
    const enough = await cli(['check', '--service', 'examples/payments-atomic/service.ts', '--time-budget', '1h', '--runs', '40', '--found', found]);
    expect(enough.code, enough.out).toBe(0);
    expect(enough.out).toMatch(/│ ✓ │ payments-atomic \/ one key per operation │ 40 +│ holds/);
    const failing = await cli(['check', '--service', 'examples/ttl-from-date-now/service.ts', '--time-budget', '1h', '--found', found]);
    expect(failing.code).toBe(1);
    expect(failing.out).toMatch(/reproduce: retrysim check --service examples\/ttl-from-date-now\/service.ts --seed 1 --runs 2\n/);
    const exhaustive = await cli(['check', '--service', 'examples/payments-atomic/service.ts', '--time-budget', '1s', '--explore', 'exhaustive']);
    expect(exhaustive.code).toBe(2);
    expect(exhaustive.err).toBe('retrysim check: --time-budget is for generated campaigns (random, pct), not --explore exhaustive');
  });

  it('--shrink-budget: a limit shrinking reaches stops it; the case in hand is still written and replays, said plainly not known to be minimal, and the verdict is fails (exit 1)', async () => {
    const module = 'examples/payments-check-then-insert/service.ts';
    // A fake machine clock that jumps an hour at every read: the 60 s default has run out by the first
    // read after the failure is found, whatever the machine's speed (the simulation never reads it).
    let now = 0;
    const jumping = () => vi.spyOn(performance, 'now').mockImplementation(() => (now += 3_600_000));
    jumping();
    const r = await cli(['check', '--service', module, '--runs', '2000', '--found', found, '--json']);
    expect(r.code, r.err).toBe(1);
    const j = JSON.parse(r.out) as { verdict: string; counterexample: string; notMinimal: string[]; why: string[]; minimised: { runs: number; removed: string[]; stopped?: { by: string; untried: string[] } } };
    expect(j.verdict).toBe('fails');
    // Not one run of the minimiser's after the one that checks the case: nothing removed, every step untried.
    expect(j.minimised).toMatchObject({ runs: 1, removed: [], stopped: { by: 'shrink budget 60 s' } });
    expect(j.minimised.stopped!.untried.length).toBeGreaterThan(0);
    expect(j.notMinimal[0]).toBe('shrinking stopped at its time limit (shrink budget 60 s): not known to be minimal');
    expect(j.notMinimal).toContain(`not shown necessary (not tried before the time limit): ${j.minimised.stopped!.untried[0]}`);
    expect(j.why).toContain('counterexample not minimal: shrinking stopped at its time limit (shrink budget 60 s): not known to be minimal');
    // The file says so too, and replays to its expect.
    const file = JSON.parse(readFileSync(j.counterexample, 'utf8')) as { description: string };
    expect(file.description).toContain('Not shown minimal: shrinking stopped at its time limit (shrink budget 60 s): not known to be minimal;');
    const replay = await cli(['replay', '--service', module, j.counterexample]);
    expect(replay.code, replay.out + replay.err).toBe(0);
    expect(replay.out).toContain('expect: met');
    // The table says it in its minimal column and in a line of its own; --shrink-budget is on the reproduce line.
    jumping();
    const text = await cli(['check', '--service', module, '--runs', '2000', '--shrink-budget', '90s', '--found', found]);
    expect(text.code).toBe(1);
    expect(text.out).toMatch(/│ ✗ │ payments-check-then-insert \/ one key per operation │ \d+ +│ fails +│ .* │ not shown \(time limit\) │/);
    expect(text.out).toContain('  not known to be minimal: shrinking stopped at its time limit (shrink budget 90 s); the counterexample fails and replays as written, and a longer --shrink-budget shrinks it further');
    expect(text.out).toContain(`reproduce: retrysim check --service ${module} --seed 1 --runs 2000 --shrink-budget 90s`);
    // (A limit it does not reach — the real clock and the default — changes nothing: the first test above shrinks the same example to minimal.)
    // The flag takes a duration as --time-budget does: 0 is bad input, one line, exit 2.
    const bad = await cli(['check', '--service', module, '--shrink-budget', '0']);
    expect(bad.code).toBe(2);
    expect(bad.err).toBe("retrysim check: --shrink-budget must be a duration such as 90s, 10m or 1h (more than 0, at most a week), got '0'");
  }, 60_000);

  it('a planted one-line bug (keys not scoped by tenant) is minimal, so --expect fails exits 0: the last, smallest scenario is not left unjudged by a budget the larger ones spent', async () => {
    const dir = tmp('planted-');
    try {
      const file = join(dir, 'service.ts');
      const src = readFileSync('examples/payments-atomic/service.ts', 'utf8');
      expect(src).toContain('const scoped = JSON.stringify([tenant, key]);');
      writeFileSync(file, src.replace('const scoped = JSON.stringify([tenant, key]);', 'const scoped = key;'));
      const r = await cli(['check', '--service', file, '--expect', 'fails', '--found', found, '--json']);
      const j = JSON.parse(r.out) as { verdict: string; notMinimal: string[]; violations: string[]; shrunkSize: { operations: number } };
      expect(j.verdict).toBe('fails');
      expect(j.violations).toContain('tenant-isolation');
      expect(j.notMinimal).toEqual([]);
      expect(j.shrunkSize.operations).toBe(2);
      expect(r.code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the shrunk size reads as English: one attempt is "1 attempt"', async () => {
    // The fingerprint-less variant fails on the key-reuse probe with a single attempt of its operation.
    const r = await cli(['check', '--service', 'src/tracker/modules/key_atomic_no_fingerprint.ts', '--runs', '300', '--found', found]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toMatch(/1 op, 1 worker, 1 fault, 1 attempt, 0 preemptions/);
  });

  it('a key-reuse failure says how a service idempotent without keys (a PUT by its own id) leaves the probe out (operation.readsKey, or a --faults list), and that command holds', async () => {
    const module = 'src/service/fixtures/put-upsert.ts';
    const r = await cli(['check', '--service', module, '--runs', '300', '--found', found]);
    expect(r.code, r.err).toBe(1);
    expect(r.out).toContain('say so in its definition, operation: { readsKey: false, … }, and the probe is left out');
    const hint = /or, for this run, --faults (\S+)\)/.exec(r.out);
    expect(hint, r.out).not.toBeNull();
    expect(hint![1]!.split(',')).not.toContain('keyReuseProbe');
    const without = await cli(['check', '--service', module, '--runs', '300', '--found', found, '--faults', hint![1]!, '--json']);
    expect(JSON.parse(without.out)).toMatchObject({ verdict: 'holds' });
    expect(without.code).toBe(0);
  });

  it('--explore pct finds the race; --expect refuted is still read as fails', async () => {
    const r = await cli(['check', '--service', 'examples/payments-check-then-insert/service.ts', '--explore', 'pct', '--runs', '300', '--expect', 'refuted', '--found', found, '--json']);
    const j = JSON.parse(r.out) as { verdict: string; expected: string; ok: boolean; counterexample: string };
    expect(j).toMatchObject({ verdict: 'fails', expected: 'fails', ok: true });
    expect(r.code).toBe(0);
    expect((await cli(['replay', j.counterexample])).code).toBe(0);
  });

  it('--html writes the counterexample\'s stepper page and an index; found files default to .retrysim/found', async () => {
    const html = tmp('html-');
    const cwd = process.cwd();
    const work = tmp('cwd-');
    const module = join(cwd, 'examples/two-transactions/service.ts');
    process.chdir(work);
    try {
      const r = await cli(['check', '--service', module, '--faults', 'crash', '--runs', '300', '--html', html, '--json']);
      const j = JSON.parse(r.out) as { counterexample: string };
      expect(r.code).toBe(1);
      expect(j.counterexample.startsWith(join('.retrysim', 'found'))).toBe(true);
      expect(existsSync(join(work, j.counterexample))).toBe(true);
      const index = readFileSync(join(html, 'index.html'), 'utf8');
      expect(index).toContain('two-transactions');
      // What it breaks and the replay command, as the text table's lines under it say (the index had only the link).
      const v = (JSON.parse((await cli(['replay', '--service', module, join(work, j.counterexample), '--json'])).out) as { violations: { invariant: string; op: string; detail: string }[] }).violations[0]!;
      expect(index).toContain(`<li><strong>${v.invariant}</strong> (${v.op}): ${v.detail.replace(/'/g, '&#39;')}</li>`);
      expect(index).toMatch(/replay: <code>retrysim replay --service .*two-transactions\/service\.ts .*\.json --trace<\/code>/);
      // The stepper page of the very file, through the user's service, as replay --html draws it.
      const page = readFileSync(join(html, `${basename(j.counterexample, '.json')}.html`), 'utf8');
      expect(page).toContain('<!doctype html>');
      expect(page).toContain('two-transactions');
      // The link back to the index speaks of what a service's index holds: a service has no claims.
      expect(page).not.toMatch(/\bclaims?\b/);
      expect(r.err).not.toContain('could not be drawn');
    } finally {
      process.chdir(cwd);
    }
  });

  it('--html on a holding service: the index says what its runs reached, as the text table and --json do', async () => {
    const html = tmp('html-');
    const r = await cli(['check', '--service', 'examples/payments-atomic/service.ts', '--runs', '60', '--found', found, '--html', html, '--json']);
    const j = JSON.parse(r.out) as { verdict: string; coverage: { rows: { what: string; runs: number }[] }; neverReached: string[] };
    expect(j.verdict).toBe('holds');
    const index = readFileSync(join(html, 'index.html'), 'utf8');
    for (const row of j.coverage.rows) expect(index).toContain(`<tr><td>${row.what}</td><td>${row.runs}</td></tr>`);
    expect(index).toContain(j.neverReached.length === 0 ? 'every situation reached' : 'never reached: ');
  });
});
