/**
 * "Bad input: one line, exit 2, nothing is written." `--found` and `--html`
 * are checked up front (a bad path fails at once, not after a long run), and
 * that check made the directories: a module that then did not load left
 * them behind, empty (found by an outside pass: `check --service ./nope.ts
 * --html pages/` created pages/). They are now made only when something is
 * written into them.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'retrysim.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', timeout: 120_000, cwd: root });

describe('--found and --html directories', () => {
  it.each([
    ['check --service', ['check', '--service', 'no/such/service.ts']],
    ['check --client', ['check', '--client', 'no/such/client.ts']],
  ])('a module that does not load (%s): exit 2, and neither directory is made', (_, args) => {
    const d = tmp('rs-outdirs-');
    const found = join(d, 'found', 'deep');
    const html = join(d, 'pages');
    const r = cli(...args, '--runs', '5', '--found', found, '--html', html);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/cannot load/);
    expect(readdirSync(d)).toEqual([]);
  });

  it('a path that cannot be a directory is still refused up front, naming the flag', () => {
    const d = tmp('rs-outdirs-');
    const file = join(d, 'a-file');
    writeFileSync(file, '');
    const r = cli('check', '--service', 'examples/payments-atomic/service.ts', '--runs', '5', '--html', join(file, 'pages'));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--html .* is not a writable directory \(ENOTDIR\)/);
  });

  it('a holding campaign writes its --html index (the directory made then) and makes no --found directory it has nothing for', () => {
    const d = tmp('rs-outdirs-');
    const found = join(d, 'found');
    const html = join(d, 'pages', 'sub');
    const r = cli('check', '--service', 'examples/payments-atomic/service.ts', '--runs', '5', '--found', found, '--html', html);
    expect(r.status).toBe(0);
    expect(existsSync(join(html, 'index.html'))).toBe(true);
    expect(existsSync(found)).toBe(false);
  }, 120_000);

  it('a failing campaign makes both, with the counterexample in --found', () => {
    const d = tmp('rs-outdirs-');
    const found = join(d, 'found');
    const html = join(d, 'pages');
    const r = cli('check', '--service', 'examples/two-transactions/service.ts', '--runs', '50', '--faults', 'crash', '--found', found, '--html', html);
    expect(r.status).toBe(1);
    expect(readdirSync(found).filter((f) => f.endsWith('.json'))).toHaveLength(1);
    expect(readdirSync(html).sort()[0]).toMatch(/\.html$/);
    expect(existsSync(join(html, 'index.html'))).toBe(true);
  }, 120_000);
});
