/**
 * A counterexample names its module by the path the campaign was given,
 * relative to the directory it ran in. Replayed from elsewhere, that path
 * points nowhere: the message said only "cannot load: no such file
 * /elsewhere/mods/service.ts", which reads as if the file were broken. It
 * now says whose path that is and the two ways to run it.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
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
    expect(lines[0]).toBe(`retrysim replay: cx.json names its service module 'examples/app-plain-http/app.ts', which is not in this directory (${join(d, 'examples/app-plain-http/app.ts')}): a file names its module relative to the directory its campaign ran in; replay from there, or name the module: retrysim replay --service PATH cx.json (--app PATH for an app)`);
  });

  it('the same file replays from the directory it names its module from, and with the module named', () => {
    expect(cli(root, 'replay', FILE).status).toBe(0);
    const d = tmp('rs-replay-elsewhere-');
    copyFileSync(join(root, FILE), join(d, 'cx.json'));
    expect(cli(d, 'replay', '--app', join(root, 'examples/app-plain-http/app.ts'), 'cx.json').status).toBe(0);
  }, 60_000);
});
