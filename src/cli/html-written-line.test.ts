/**
 * The line `check --html DIR` prints names the index it wrote as a path that
 * opens. The README writes the directory as `--html pages/`, and the line read
 * `wrote 1 counterexample page(s) and pages//index.html` (found by a newcomer
 * pass): the directory and the file name were glued with a '/', whatever DIR
 * ended with. The three campaigns print it; each is held here.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'retrysim.js');

describe('check --html DIR/: the printed index path', () => {
  it.each([
    // The built-in naive claim fails as expected (exit 0); the other two fail (exit 1).
    ['check', ['check', '--variant', 'naive', '--runs', '5'], 0],
    ['check --service', ['check', '--service', 'examples/two-transactions/service.ts', '--faults', 'crash', '--runs', '50'], 1],
    ['check --client', ['check', '--client', 'examples/fetch-retry-client/client.ts', '--runs', '20'], 1],
  ])('%s names DIR/index.html once, with no doubled slash, and the file is there', (_, args, exit) => {
    const d = tmp('rs-html-line-');
    const r = spawnSync(process.execPath, [bin, ...args, '--found', join(d, 'found'), '--html', `${join(d, 'pages')}/`], { encoding: 'utf8', timeout: 120_000, cwd: root });
    expect(r.status, r.stderr).toBe(exit);
    const line = r.stderr.split('\n').find((l) => l.startsWith('wrote '));
    expect(line).toBe(`wrote 1 counterexample page(s) and ${join(d, 'pages', 'index.html')}`);
    expect(existsSync(join(d, 'pages', 'index.html'))).toBe(true);
  }, 120_000);
});
