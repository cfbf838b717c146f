import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLAIMS } from '../campaign/claims.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const bin = join(import.meta.dirname, '..', '..', 'bin', 'retrysim.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

describe('retrysim check', () => {
  it('gives the same verdicts and counterexamples whatever the number of workers', () => {
    const d1 = tmp('rs-check-');
    const d2 = tmp('rs-check-');
    const a = cli('check', '--runs', '150', '--seed', '11', '--workers', '1', '--json', '--found', d1);
    const b = cli('check', '--runs', '150', '--seed', '11', '--workers', '2', '--json', '--found', d2);
    expect(a.status).toBe(0);
    expect(b.status).toBe(0);
    const strip = (out: string) => (JSON.parse(out) as Array<Record<string, unknown>>).map(({ firstFailureMs: _t, counterexample, ...rest }) => ({ ...rest, file: typeof counterexample === 'string' ? counterexample.split('/').pop() : null }));
    expect(strip(b.stdout)).toEqual(strip(a.stdout));
    expect(readdirSync(d2).sort()).toEqual(readdirSync(d1).sort());
    expect(readdirSync(d1).length).toBe(CLAIMS.filter((c) => c.expected === 'fails').length);
    // The banner names the seed (on stderr under --json).
    expect(a.stderr).toMatch(/seed 11/);
  });

  it('prints its memory use only under RETRYSIM_DEBUG=1, the diagnostics switch', () => {
    const args = [bin, 'check', '--claim', 'naive-none-fails', '--runs', '20', '--found', tmp('rs-check-')];
    const { RETRYSIM_DEBUG: _off, ...env } = process.env;
    const plain = spawnSync(process.execPath, args, { encoding: 'utf8', env });
    expect(plain.status).toBe(0);
    expect(plain.stderr + plain.stdout).not.toMatch(/memory|rss/);
    const debug = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...env, RETRYSIM_DEBUG: '1' } });
    expect(debug.status).toBe(0);
    expect(debug.stderr).toMatch(/^memory: rss \d+ MB at start, \d+ MB at end, peak \d+ MB$/m);
    expect(debug.stdout).not.toMatch(/memory/);
  });

  it('rejects bad flags with a message and exit 2, before doing any work', () => {
    const aFile = join(tmp('rs-check-'), 'file');
    writeFileSync(aFile, '');
    for (const args of [['--runs', '0'], ['--explore', 'dfs'], ['--variant', 'optimistic'], ['--claim', 'naive-holds'], ['--claim', 'naive-none-fails', '--variant', 'key_atomic'], ['--workers', 'x'], ['--bogus'], ['--found', join(aFile, 'sub')]]) {
      const r = cli('check', ...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/retrysim check: /);
    }
  });

  it('--claim runs only the claims named, and the reproduce line names them', () => {
    const d = tmp('rs-check-');
    const r = cli('check', '--claim', 'naive-none-fails', '--claim', 'key_split-tool_call-race-fails', '--runs', '50', '--json', '--found', d);
    expect(r.status).toBe(0);
    expect((JSON.parse(r.stdout) as Array<{ claim: string }>).map((x) => x.claim)).toEqual(['naive-none-fails', 'key_split-tool_call-race-fails']);
    expect(r.stderr).toContain('--claim naive-none-fails --claim key_split-tool_call-race-fails');
  });

  it('prints the failing claims with the command that replays them', () => {
    const d = tmp('rs-check-');
    const r = cli('check', '--variant', 'naive', '--runs', '50', '--found', d);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/naive \/ none .* fails/);
    expect(r.stdout).toContain(d);
  });
});

describe('retrysim replay and matrix', () => {
  it('replay exits 0 when expect is met and 2 for a bad file', () => {
    expect(cli('replay', 'scenarios/canonical/lost_response/key_atomic--tool_call.json').status).toBe(0);
    const bad = cli('replay', 'package.json');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/at format/);
    expect(cli('replay').status).toBe(2);
    // A missing file is one line naming it, not an "invalid scenario" with an issue at its root.
    const missing = cli('replay', 'nope.json');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe('retrysim replay: nope.json: cannot read file: no such file (ENOENT)\n');
  });

  it('an unwritable output path is refused up front, naming the flag', () => {
    const aFile = join(tmp('rs-out-'), 'file');
    writeFileSync(aFile, '');
    const m = cli('matrix', '--write-scenarios', join(aFile, 'dir'));
    expect(m.status).toBe(2);
    expect(m.stderr).toMatch(/--write-scenarios .* is not a writable directory \(ENOTDIR\)/);
    const h = cli('herd', '--runs', '1', '--svg', join(aFile, 'x.svg'));
    expect(h.status).toBe(2);
    expect(h.stderr).toMatch(/--svg .* cannot be written/);
  });

  it('matrix --json has the documented shape', () => {
    const r = cli('matrix', '--json');
    expect(r.status).toBe(0);
    const m = JSON.parse(r.stdout);
    expect(m.columns).toContain('lost_response');
    expect(m.rows['naive/none'].lost_response).toBe(2);
    expect(m.rows['key_atomic/tool_call'].lost_response).toBe(1);
  });

  it('the bin answers --help and refuses unknown commands', () => {
    expect(cli('--help').status).toBe(0);
    const r = cli('frobnicate');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'frobnicate'/);
  });
});
