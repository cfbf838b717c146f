// A client campaign a client stops (it waits on a promise nobody resolves)
// names the run and writes the smallest stopping case fast-check found:
// replayed with --trace it shows the run up to the stop, and the same line,
// exit 2. Until 2026-12 neither the run nor a file was given.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliProcess, runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const CLIENT = 'src/client/fixtures/stuck-on-409.ts';

describe('the run that stopped a client campaign', () => {
  it('check --client names the run and writes it; replay --trace shows the 409 it stopped after, exit 2', async () => {
    const found = tmp('rs-client-stopped-');
    const r = await runMain(['check', '--client', CLIENT, '--found', found]);
    expect(r.code, r.out + r.err).toBe(2);
    const lines = r.err.trim().split('\n');
    const stop = lines.find((l) => l.startsWith('retrysim check:'))!;
    expect(stop).toMatch(/waiting, but on neither a timer nor a request/);
    const files = readdirSync(found);
    expect(files).toHaveLength(1);
    const file = join(found, files[0]!);
    expect(lines[lines.indexOf(stop) + 1]).toBe(`  it stopped at run ${/run (\d+)/.exec(lines[lines.indexOf(stop) + 1]!)![1]}: ${file} — retrysim replay --client ${CLIENT} ${file} --trace shows the run up to the stop`);
    const scenario = JSON.parse(readFileSync(file, 'utf8')) as { operations: unknown[]; expect: unknown; client: { name: string } };
    expect(scenario.operations).toHaveLength(1); // shrunk
    expect(scenario.expect).toEqual({ violations: [] });
    expect(scenario.client.name).toBe('stuck-on-409');

    const replay = runCliProcess(['replay', '--client', CLIENT, file, '--trace']);
    expect(replay.status, replay.stderr).toBe(2);
    expect(replay.stdout).toContain('timeline up to the stop:');
    expect(replay.stdout).toMatch(/answer 409/);
    expect(replay.stderr.trim()).toBe(stop.replace('retrysim check:', 'retrysim replay:'));

    // --html draws the client's run up to the stop (it wrote nothing): the same line and exit 2, and the page says why.
    const page = join(tmp('rs-client-stopped-page-'), 'run.html');
    const drawn = runCliProcess(['replay', '--client', CLIENT, file, '--html', page]);
    expect(drawn.status, drawn.stderr).toBe(2);
    expect(drawn.stderr.trim().split('\n')).toEqual([stop.replace('retrysim check:', 'retrysim replay:'), `wrote ${page} (the run up to the stop)`]);
    const html = readFileSync(page, 'utf8');
    expect(html).toContain(`"stopped":${JSON.stringify(stop.replace('retrysim check: ', ''))}`);
    expect(html).toMatch(/"text":"[^"]*409/); // the 409 it stopped after is a step
  }, 120_000);

  it('--json: one object on stdout (verdict error, the stderr line, the written run), exit 2; --html: an index naming the stop', async () => {
    const found = tmp('rs-client-stopped-json-');
    const html = tmp('rs-client-stopped-html-');
    const r = await runMain(['check', '--client', CLIENT, '--found', found, '--json', '--html', html]);
    expect(r.code, r.err).toBe(2);
    const stop = r.err.split('\n').find((l) => l.startsWith('retrysim check:'))!;
    const j = JSON.parse(r.out) as Record<string, unknown>;
    const file = join(found, readdirSync(found)[0]!);
    expect(j).toMatchObject({ client: 'stuck-on-409', module: CLIENT, verdict: 'error', ok: false, error: stop.replace('retrysim check: ', ''), stopped: { file, replay: `retrysim replay --client ${CLIENT} ${file} --trace` } });
    const page = readFileSync(join(html, 'index.html'), 'utf8');
    expect(page).toContain('<td>error</td>');
    expect(page).toContain('waiting, but on neither a timer nor a request');
    // The client's run is drawn up to the stop and linked (the index alone named the file).
    const drawn = `${basename(file, '.json')}.html`;
    expect(page).toContain(`<a href="${encodeURIComponent(drawn)}">the run up to the stop</a>`);
    expect(readFileSync(join(html, drawn), 'utf8')).toContain(`"stopped":${JSON.stringify(j.error)}`);
  }, 120_000);
});
