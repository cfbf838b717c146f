// A campaign a service stops (a request never answered) names the run and
// writes it as a scenario file: replayed with --trace it shows the run up to
// the stop, and the same line, exit 2. Until 2026-12 the line named a
// request (s1/op1.w0#4) of a run nobody could look at.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliProcess, runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const SERVICE = 'src/service/fixtures/hangs-on-duplicate.ts';

describe('the run that stopped a campaign', () => {
  it('check --service names the run and writes it; replay --trace shows the run up to the same stop, exit 2', async () => {
    const found = tmp('rs-stopped-');
    const r = await runMain(['check', '--service', SERVICE, '--runs', '200', '--found', found]);
    expect(r.code, r.out + r.err).toBe(2);
    const lines = r.err.trim().split('\n');
    const stop = lines.find((l) => l.startsWith('retrysim check:'))!;
    expect(stop).toMatch(/never answered request/);
    const files = readdirSync(found);
    expect(files).toHaveLength(1);
    const file = join(found, files[0]!);
    expect(lines[lines.indexOf(stop) + 1]).toMatch(new RegExp(`^ {2}it stopped at run \\d+: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} — retrysim replay --service ${SERVICE} \\S+ --trace shows the run up to the stop$`));
    const scenario = JSON.parse(readFileSync(file, 'utf8')) as { description: string; schedule: unknown[]; expect: unknown; operations: Array<{ workers: number }>; faults: Record<string, unknown> };
    expect(scenario.description).toContain(stop.replace('retrysim check: ', ''));
    expect(scenario.expect).toEqual({ violations: [] });
    // Shrunk as a failure is: run 1 stopped after a kill, a lost answer, a pause and a slow step; the smallest
    // stop is two workers of one operation, no fault at all (the twin of the request answered 201 waits for ever).
    expect(scenario.operations).toEqual([expect.objectContaining({ workers: 2 })]);
    expect(scenario.faults).toEqual({ loseResponseAfterCommit: 0, crashMidRequest: 0, slowMs: 0 });

    const replay = runCliProcess(['replay', '--service', SERVICE, file, '--trace']);
    expect(replay.status, replay.stderr).toBe(2);
    expect(replay.stdout).toContain('timeline up to the stop:');
    // The request the campaign named is the one the replay stops on.
    const request = /never answered request (\S+):/.exec(stop)![1]!;
    expect(replay.stdout).toMatch(new RegExp(`${request.replace(/[.*+?^${}()|[\]\\/#]/g, '\\$&')}\\s+spawn`));
    expect(replay.stderr.trim()).toBe(stop.replace('retrysim check:', 'retrysim replay:'));

    // --html draws the run up to the stop (it wrote nothing): the same line and exit 2, and the page says why.
    const page = join(tmp('rs-stopped-page-'), 'run.html');
    const drawn = runCliProcess(['replay', '--service', SERVICE, file, '--html', page]);
    expect(drawn.status, drawn.stderr).toBe(2);
    expect(drawn.stderr.trim().split('\n')).toEqual([stop.replace('retrysim check:', 'retrysim replay:'), `wrote ${page} (the run up to the stop)`]);
    const html = readFileSync(page, 'utf8');
    expect(html).toContain(`"stopped":${JSON.stringify(stop.replace('retrysim check: ', ''))}`);
    // Its steps go up to the stop: the request that was never answered is sent.
    expect(html).toContain(`"actor":${JSON.stringify(request)}`);

    // The same campaign writes the same file.
    const again = tmp('rs-stopped-again-');
    await runMain(['check', '--service', SERVICE, '--runs', '200', '--found', again]);
    expect(readFileSync(join(again, files[0]!), 'utf8')).toBe(readFileSync(file, 'utf8'));
  }, 120_000);

  it('--json: one object on stdout (verdict error, the stderr line, the written run), exit 2; --html: an index naming the stop and its replay', async () => {
    const found = tmp('rs-stopped-json-');
    const html = tmp('rs-stopped-html-');
    const r = await runMain(['check', '--service', SERVICE, '--runs', '200', '--found', found, '--json', '--html', html]);
    expect(r.code, r.err).toBe(2);
    const stop = r.err.split('\n').find((l) => l.startsWith('retrysim check:'))!;
    const j = JSON.parse(r.out) as Record<string, unknown>;
    const file = join(found, readdirSync(found)[0]!);
    expect(j).toMatchObject({ service: 'hangs-on-duplicate', module: SERVICE, seed: 1, explore: 'random', verdict: 'error', ok: false, error: stop.replace('retrysim check: ', ''), counterexample: null });
    expect(j.why).toEqual([j.error]);
    expect(j.stopped).toEqual({ run: expect.any(Number), shrinking: false, file, replay: `retrysim replay --service ${SERVICE} ${file} --trace` });
    // The run is drawn up to the stop beside the index, and linked from it (the index alone named the file).
    const drawn = `${basename(file, '.json')}.html`;
    expect(readdirSync(html).sort()).toEqual([drawn, 'index.html'].sort());
    expect(r.err).toContain(`wrote the run up to the stop and ${join(html, 'index.html')}`);
    const page = readFileSync(join(html, 'index.html'), 'utf8');
    expect(page).toContain('<td>error</td>');
    expect(page).toContain(`The campaign stopped at run ${(j.stopped as { run: number }).run}`);
    expect(page).toContain('never answered request');
    expect(page).toContain(`retrysim replay --service ${SERVICE} ${file} --trace`);
    expect(page).toContain(`<a href="${encodeURIComponent(drawn)}">the run up to the stop</a>`);
    expect(readFileSync(join(html, drawn), 'utf8')).toContain(`"stopped":${JSON.stringify(j.error)}`);
  }, 120_000);

  it('an exhaustive search stopped so writes the schedule it was on; its replay stops the same way', async () => {
    const found = tmp('rs-stopped-exhaustive-');
    const r = await runMain(['check', '--service', SERVICE, '--explore', 'exhaustive', '--found', found]);
    expect(r.code, r.out + r.err).toBe(2);
    const stop = r.err.split('\n').find((l) => l.startsWith('retrysim check:'))!;
    const files = readdirSync(found);
    expect(files).toHaveLength(1);
    const file = join(found, files[0]!);
    expect(r.err).toContain(`: ${file} — retrysim replay --service ${SERVICE} ${file} --trace shows the run up to the stop`);
    expect((JSON.parse(readFileSync(file, 'utf8')) as { description: string }).description).toMatch(/\(schedule \d+ of its exhaustive search\)/);
    const replay = runCliProcess(['replay', '--service', SERVICE, file]);
    expect(replay.status, replay.stderr).toBe(2);
    expect(replay.stderr.trim()).toBe(stop.replace('retrysim check:', 'retrysim replay:'));
  }, 120_000);

  it('check --app: the stop is minimised as a counterexample is — an app that never answers a reused key with another body writes one operation and the key-reuse probe', async () => {
    const app = 'src/app/fixtures/no-answer-on-reuse.ts';
    const found = tmp('rs-stopped-app-');
    const r = await runMain(['check', '--app', app, '--found', found]);
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err).toContain("retrysim check: app 'no-answer-on-reuse': never answered POST /orders");
    const file = join(found, readdirSync(found)[0]!);
    const scenario = JSON.parse(readFileSync(file, 'utf8')) as { description: string; operations: Array<{ workers: number; steps: string }>; faults: Record<string, unknown> };
    expect(scenario.description).toContain('minimised as a counterexample is:');
    expect(scenario.operations).toEqual([expect.objectContaining({ workers: 1 })]);
    expect(scenario.faults).toMatchObject({ loseResponseAfterCommit: 0, crashMidRequest: 0, slowMs: 0 });
    expect(scenario.faults).not.toHaveProperty('kill');
    expect(scenario.faults).not.toHaveProperty('pause');
    const replay = runCliProcess(['replay', '--app', app, file, '--trace']);
    expect(replay.status, replay.stderr).toBe(2);
    expect(replay.stdout).toContain('key-reuse probe');
    // The line check printed is the file's own stop, request and all.
    expect(replay.stderr.trim()).toBe(r.err.split('\n').find((l) => l.startsWith('retrysim check:'))!.replace('retrysim check:', 'retrysim replay:'));
    // Two requests: the first answered 201, the probe never answered.
    expect([...replay.stdout.matchAll(/(s\d+\/op\d+\.w\d+#\d+)\s+spawn/g)].map((m) => m[1])).toEqual(['s0/op1.w0#1', 's0/op1.w0#2']);
  }, 120_000);
});
