import { describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const bin = join(import.meta.dirname, '..', '..', 'bin', 'retrysim.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
const cliAsync = (args: string[], env: NodeJS.ProcessEnv = process.env) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
  const p = spawn(process.execPath, [bin, ...args], { env });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d) => (stdout += d));
  p.stderr.on('data', (d) => (stderr += d));
  p.on('close', (code) => resolve({ code, stdout, stderr }));
});

const essence = (out: string) => (JSON.parse(out) as Array<Record<string, unknown>>).map(({ firstFailureMs: _t, counterexample, ...rest }) => ({ ...rest, file: typeof counterexample === 'string' ? counterexample.split('/').pop() : null }));

describe('retrysim check --shard and retrysim merge', () => {
  it('three shards as separate processes, merged, print what the unsharded run prints (table rows, JSON and exit code)', async () => {
    const d = tmp('rs-shard-');
    try {
      const common = ['check', '--variant', 'key_split', '--variant', 'naive', '--runs', '400', '--seed', '4', '--workers', '1'];
      // Shard 2 comes from the environment, as under a CI matrix.
      const shards = await Promise.all([
        cliAsync([...common, '--shard', '1/3', '--out', join(d, 's1.json'), '--found', join(d, 'f')]),
        cliAsync([...common, '--shard', 'auto', '--out', join(d, 's2.json'), '--found', join(d, 'f')], { ...process.env, RETRYSIM_SHARD: '2/3' }),
        cliAsync([...common, '--shard', '3/3', '--out', join(d, 's3.json'), '--found', join(d, 'f')]),
      ]);
      for (const s of shards) expect(s.code, s.stderr).toBe(0);
      const merged = cli('merge', join(d, 's1.json'), join(d, 's2.json'), join(d, 's3.json'), '--json');
      const whole = cli(...common, '--json', '--found', join(d, 'w'));
      expect(merged.status).toBe(whole.status);
      expect(essence(merged.stdout)).toEqual(essence(whole.stdout));
      const table = cli('merge', join(d, 's3.json'), join(d, 's1.json'), join(d, 's2.json'));
      expect(table.status).toBe(whole.status);
      expect(table.stdout).toMatch(/race-fails/);
      // Bad input: exit 2 and one line naming the file or the shard.
      const missing = cli('merge', join(d, 's1.json'), join(d, 's3.json'));
      expect(missing.status).toBe(2);
      expect(missing.stderr).toMatch(/missing shard 2\/3/);
      writeFileSync(join(d, 'bad.json'), '{"format":"x"}');
      const bad = cli('merge', join(d, 'bad.json'));
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/bad\.json: not a retrysim\.shard\/1 file/);
      expect(bad.stderr).not.toMatch(/\n\s+at /);
      expect(readdirSync(join(d, 'f')).length).toBeGreaterThan(0);
      // One shard's --json: each row says it covers the shard's runs only, and why the shard exits 0.
      const one = cli(...common, '--shard', '1/3', '--out', join(d, 's1b.json'), '--found', join(d, 'f'), '--json');
      expect(one.status).toBe(0);
      const rows = JSON.parse(one.stdout) as Array<{ verdict: string; shard: unknown }>;
      expect(rows.some((r) => r.verdict === 'fails')).toBe(true);
      for (const r of rows) expect(r.shard).toMatchObject({ index: 1, count: 3, exitCode: 0 });
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });

  it('refuses bad shard and budget flags with exit 2 before any work', () => {
    for (const args of [['--shard', '0/3', '--out', '/tmp/x.json'], ['--shard', '4/3', '--out', '/tmp/x.json'], ['--shard', '1/3'], ['--shard', 'auto', '--out', '/tmp/x.json'], ['--time-budget', 'soon'], ['--explore', 'exhaustive', '--shard', '1/2', '--out', '/tmp/x.json']]) {
      const env = { ...process.env };
      for (const k of ['RETRYSIM_SHARD', 'CI_NODE_INDEX', 'CIRCLE_NODE_INDEX', 'BUILDKITE_PARALLEL_JOB', 'JOB_COMPLETION_INDEX']) delete env[k];
      const r = spawnSync(process.execPath, [bin, 'check', ...args], { encoding: 'utf8', env });
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^retrysim check: /);
    }
  });

  it('--time-budget runs each claim until the budget and says how many runs that was (fewer than the main job asks: inconclusive)', () => {
    const r = cli('check', '--variant', 'key_atomic', '--time-budget', '1s', '--workers', '1', '--json', '--found', tmp('rs-tb-'));
    const rows = JSON.parse(r.stdout) as Array<{ claim: string; runs: number; asked: number; verdict: string }>;
    const holds = rows.find((x) => x.claim === 'key_atomic-tool_call-holds')!;
    expect(holds.runs).toBeGreaterThan(10);
    expect(holds.verdict).toBe(holds.runs >= holds.asked ? 'holds' : 'inconclusive');
    expect(r.status).toBe(rows.some((x) => x.verdict === 'inconclusive') ? 4 : 0);
  });
});
