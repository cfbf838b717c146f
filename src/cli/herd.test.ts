import { describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const bin = join(__dirname, '..', '..', 'bin', 'retrysim.js');
const herd = (...args: string[]) => spawnSync(process.execPath, [bin, 'herd', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('retrysim herd', () => {
  test.each([
    [['--strategies', 'expo,fibonacci'], /unknown strategy 'fibonacci'/],
    [['--clients', '10,0'], /--clients must be an integer from 1 to 5000, got '0'/],
    [['--clients', '-5'], /--clients/],
    [['--runs', '0'], /--runs must be an integer >= 1/],
    [['--runs', 'many'], /--runs must be an integer >= 1/],
    [['--bogus'], /Unknown option '--bogus'/],
  ])('bad flags %j exit 2 with a clear message', (args, msg) => {
    const r = herd(...(args as string[]));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(msg as RegExp);
    expect(r.stdout).toBe('');
  });

  test('--json is byte-identical for the same seed, whatever the worker count', () => {
    const args = ['--clients', '5,20', '--strategies', 'none,full,decorrelated', '--runs', '8', '--seed', '42', '--json'];
    const a = herd(...args, '--workers', '0');
    const b = herd(...args, '--workers', '1');
    expect(a.status).toBe(0);
    expect(b.status).toBe(0);
    expect(a.stdout).toBe(b.stdout);
    const rows = JSON.parse(a.stdout) as Array<Record<string, unknown>>;
    expect(rows).toHaveLength(6);
    expect(Object.keys(rows[0]!)).toEqual(['strategy', 'clients', 'runs', 'calls', 'callsSe', 'ms', 'msSe', 'events']);
    const c = herd(...args.map((x) => (x === '42' ? '43' : x)), '--workers', '0');
    expect(c.stdout).not.toBe(a.stdout);
  });

  test('text output: table, note on overload, events/s; --svg writes a picture', () => {
    const dir = tmp('herd-');
    const svg = join(dir, 'h.svg');
    const r = herd('--clients', '10', '--runs', '3', '--svg', svg);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/decorrelated/);
    expect(r.stdout).toMatch(/never overloaded/);
    expect(r.stdout).toMatch(/events \d+ +wall [\d.]+ s +[\d.]+ M events\/s/);
    const text = readFileSync(svg, 'utf8');
    expect(text.startsWith('<svg')).toBe(true);
    expect(text).toMatch(/10 clients/);
    expect((text.match(/<path /g) ?? []).length).toBe(6);
  });
});
