/**
 * `replay FILE --html DIR/` writes the page inside the folder, named after
 * the scenario file, as `check --html DIR` names its pages. Until 2026-12 it
 * refused: `--html 'pages/' cannot be written (EISDIR)`, exit 2 (found by an
 * outside user who passed replay the folder check had written to). A bad
 * file still writes nothing, not even the folder.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'retrysim.js');
const FILE = 'scenarios/canonical/concurrent_duplicate/key_atomic--tool_call.json';
const replay = (...args: string[]) => spawnSync(process.execPath, [bin, 'replay', ...args], { encoding: 'utf8', timeout: 120_000, cwd: root });

describe('replay --html DIR/', () => {
  it('a new folder (trailing /) and an existing one each get DIR/<the file name>.html', () => {
    const d = tmp('rs-replay-html-');
    const fresh = join(d, 'pages');
    const a = replay(FILE, '--html', `${fresh}/`);
    expect(a.status, a.stderr).toBe(0);
    expect(existsSync(join(fresh, 'key_atomic--tool_call.html'))).toBe(true);
    expect(a.stderr).toContain(`wrote ${join(fresh, 'key_atomic--tool_call.html')}`);
    const there = join(d, 'there');
    mkdirSync(there);
    const b = replay(FILE, '--html', there);
    expect(b.status, b.stderr).toBe(0);
    expect(existsSync(join(there, 'key_atomic--tool_call.html'))).toBe(true);
  });

  it('a malformed file: exit 2, the file named, and the folder is not made', () => {
    const d = tmp('rs-replay-html-bad-');
    const bad = join(d, 'bad.json');
    writeFileSync(bad, '{"format": "retrysim.scenario/2"');
    const r = replay(bad, '--html', `${join(d, 'pages')}/`);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^retrysim replay: .*bad\.json: invalid scenario/);
    expect(existsSync(join(d, 'pages'))).toBe(false);
  });
});
