/**
 * A counterexample names its module by the path the campaign was given,
 * relative to the directory it ran in. Replayed from elsewhere, that path
 * points nowhere: the message said only "cannot load: no such file
 * /elsewhere/mods/service.ts", which reads as if the file were broken. It
 * now says whose path that is and the two ways to run it.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'retrysim.js');
const cli = (cwd: string, ...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 60_000, cwd });
const FILE = 'examples/app-plain-http/counterexamples/orders-check-then-insert-exactly-one-53b9175c.json';

describe('replay of a file whose module path is relative to another directory', () => {
  it('names the path as the file gives it and says how to run it: exit 2, one line', () => {
    const d = tmp('rs-replay-elsewhere-');
    copyFileSync(join(root, FILE), join(d, 'cx.json'));
    const r = cli(d, 'replay', 'cx.json');
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    // Found by `check --app` (its description says so): an app module, named with --app.
    expect(lines[0]).toBe(`retrysim replay: cx.json names its app module 'examples/app-plain-http/app.ts', which is not in this directory (${join(d, 'examples/app-plain-http/app.ts')}): a file names its module relative to the directory its campaign ran in; replay from there, or, if the module moved, was renamed or is misspelled in the file, name it: retrysim replay --app PATH cx.json`);
  });

  // The file has no field saying app or service; the command its campaign wrote in its
  // description does. A file without one (written by hand) gets words true of both.
  it.each([
    ['Found by retrysim check --service examples/app-plain-http/app.ts (seed 1): exactly-one.', "its service module 'examples/app-plain-http/app.ts'", 'retrysim replay --service PATH cx.json'],
    ["Found by a vitest property (retrysim's vitest helper, seed 1; replay with retrysim replay --app examples/app-plain-http/app.ts <this file>): exactly-one.", "its app module 'examples/app-plain-http/app.ts'", 'retrysim replay --app PATH cx.json'],
    ['Two orders for one operation.', "its module 'examples/app-plain-http/app.ts'", 'retrysim replay --service PATH cx.json (--app PATH for an app)'],
  ])('description %j: the module is named as %s', (description, named, how) => {
    const d = tmp('rs-replay-elsewhere-');
    const s = JSON.parse(readFileSync(join(root, FILE), 'utf8')) as { description: string };
    s.description = description;
    writeFileSync(join(d, 'cx.json'), JSON.stringify(s, null, 2));
    const r = cli(d, 'replay', 'cx.json');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`cx.json names ${named}, which is not in this directory`);
    expect(r.stderr.trim().endsWith(how)).toBe(true);
  });

  it('a module outside this directory is named by its kind, with the flag that runs it', () => {
    const d = tmp('rs-replay-outside-');
    const s = JSON.parse(readFileSync(join(root, FILE), 'utf8')) as { service: { module: string }; description: string };
    const outside = join(root, 'examples/app-plain-http/app.ts');
    s.service.module = outside;
    s.description = s.description.replace('examples/app-plain-http/app.ts', outside);
    writeFileSync(join(d, 'cx.json'), JSON.stringify(s, null, 2));
    const r = cli(d, 'replay', 'cx.json');
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe(`retrysim replay: cx.json names app module '${outside}', outside this directory; a scenario file does not choose code to run — if you trust it, name it yourself: retrysim replay --app ${outside} cx.json`);
  });

  it('the same file replays from the directory it names its module from, and with the module named', () => {
    expect(cli(root, 'replay', FILE).status).toBe(0);
    const d = tmp('rs-replay-elsewhere-');
    copyFileSync(join(root, FILE), join(d, 'cx.json'));
    expect(cli(d, 'replay', '--app', join(root, 'examples/app-plain-http/app.ts'), 'cx.json').status).toBe(0);
  }, 60_000);
});

describe('replay with another module than the file names', () => {
  it('a divergence says which module the file was found against and which one ran: exit 3, one line', () => {
    const r = cli(root, 'replay', '--app', 'examples/app-plain-http/app-claim.ts', FILE);
    expect(r.status).toBe(3);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    // Until 2026-12 it said only "the model or its inputs changed, the file was edited, or … nondeterministic".
    expect(lines[0]).toMatch(/replay diverged at choice #\d+: .*; the file was found against examples\/app-plain-http\/app\.ts, and this replay ran examples\/app-plain-http\/app-claim\.ts — a fixed module takes other steps, so a strict replay cannot say whether the fix works: run check on it again$/);
    // The module the file names, given as the same file by another path, says nothing more (and replays).
    const same = cli(root, 'replay', '--app', join(root, 'examples/app-plain-http/app.ts'), FILE);
    expect(same.status).toBe(0);
  });
});

describe('replay of a counterexample after its module was edited in place (a fix)', () => {
  it('the divergence says the module may have changed and that check, not replay, judges a fix: exit 3, one line', () => {
    const d = tmp('rs-replay-fixed-');
    copyFileSync(join(root, 'examples/payments-check-then-insert/service.ts'), join(d, 'service.ts'));
    expect(cli(d, 'check', '--service', './service.ts', '--runs', '20', '--found', 'found').status).toBe(1);
    const found = readdirSync(join(d, 'found')).filter((f) => f.endsWith('.json'));
    expect(found).toHaveLength(1);
    // The user's fix: the same path, now claiming the key atomically (other steps).
    copyFileSync(join(root, 'examples/payments-atomic/service.ts'), join(d, 'service.ts'));
    const r = cli(d, 'replay', join('found', found[0]!));
    expect(r.status).toBe(3);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    // Until 2026-12 it ended at "the model or its inputs changed, the file was edited, or … nondeterministic".
    expect(lines[0]).toMatch(/replay diverged at choice #\d+: .*; if \.\/service\.ts changed since the file was found — a fixed module takes other steps, so a strict replay cannot say whether the fix works: run check on it again$/);
  }, 120_000);
});
