import { describe, expect, test } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const bin = join(__dirname, '..', '..', 'bin', 'retrysim.js');
const amplify = (...args: string[]) => spawnSync(process.execPath, [bin, 'amplify', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('retrysim amplify', () => {
  test.each([
    [['--budget', 'lots'], /--budget must be one of none, ratio, token-bucket, got 'lots'/],
    [['--layers', '0'], /--layers must be an integer from 1 to 20, got '0'/],
    [['--attempts', '3,x'], /--attempts must be an integer from 1 to 10, got 'x'/],
    [['--layers', '3', '--attempts', '4,3'], /--layers 3 does not match the 2 entries/],
    [['--failure-rate', '1.5'], /--failure-rate must be a number from 0 to 1, got '1.5'/],
    [['--calls', 'many'], /--calls must be an integer from 1 to 100000/],
    [['--bogus'], /Unknown option '--bogus'/],
  ])('bad flags %j exit 2 with a clear message', (args, msg) => {
    const r = amplify(...(args as string[]));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(msg as RegExp);
    expect(r.stdout).toBe('');
  });

  test('default table: closed form next to the simulation, the budget near 1.11× per layer, the SPEC figures, a note', () => {
    const r = amplify('--calls', '100');
    expect(r.status).toBe(0);
    const line = (name: string) => r.stdout.split('\n').find((l) => l.includes(name))!.split('│').map((s) => s.trim()).filter(Boolean);
    expect(line('closed form 3^L')).toEqual(['closed form 3^L', '3', '9', '27', '81', '243', '3.000×']);
    expect(line('no control (simulated)')).toEqual(['no control (simulated)', '3', '9', '27', '81', '243', '3.000×']);
    expect(line('retry budget 10 %')[6]).toMatch(/^1\.1[01]\d×$/);
    expect(line('harness 4 × SDK 3')).toEqual(['harness 4 × SDK 3', '4 × 3 = 12', '12']);
    expect(line('3 attempts × 5 layers')).toEqual(['3 attempts × 5 layers', '3^5 = 243', '243']);
    expect(r.stdout).toMatch(/token bucket 500\/5/);
    expect(r.stdout).toMatch(/instead of A\^L/);
  });

  test('--json, a per-layer attempts list and --budget; same seed, same bytes', () => {
    const args = ['--attempts', '4,3', '--budget', 'none', '--calls', '10', '--seed', '9', '--json'];
    const a = amplify(...args);
    expect(a.status).toBe(0);
    expect(amplify(...args).stdout).toBe(a.stdout);
    const j = JSON.parse(a.stdout);
    expect(j.rows).toHaveLength(1);
    expect(j.rows[0].cells.map((c: { requestsPerCall: number }) => c.requestsPerCall)).toEqual([4, 12]);
    expect(j.specFigures.map((f: { simulated: number }) => f.simulated)).toEqual([243, 27, 12]);
  });
});
