import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const bin = join(import.meta.dirname, '..', '..', 'bin', 'retrysim.js');
const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });

describe('retrysim check --explore exhaustive --unreduced', () => {
  it('shows schedules with and without reduction; the table, --json and the exit code agree', () => {
    const d = tmp('rs-exh-');
    const args = ['check', '--variant', 'key_split', '--explore', 'exhaustive', '--unreduced', '--workers', '1', '--found', d];
    const text = cli(...args);
    const json = cli(...args, '--json');
    expect(text.status).toBe(0);
    expect(json.status).toBe(0);
    const rows = JSON.parse(json.stdout) as Array<{ claim: string; runs: number; schedulesUnreduced: number; blocked: number; verdict: string }>;
    const race = rows.find((r) => r.claim === 'key_split-tool_call-race-fails')!;
    expect(race.verdict).toBe('fails');
    // The race needs more interleavings than reduced schedules to show itself.
    expect(race.schedulesUnreduced).toBeGreaterThan(race.runs);
    for (const r of rows) expect(text.stdout).toContain(`${r.runs}; unreduced ${r.schedulesUnreduced}`);
  });

  it('a failing row says which schedule failed first, and when: built-in claims as services do, in the table and in --json', () => {
    const d = tmp('rs-exh-');
    const paths = [
      ['check', '--claim', 'key_split-tool_call-race-fails', '--explore', 'exhaustive', '--workers', '1', '--found', d],
      ['check', '--service', 'examples/payments-check-then-insert/service.ts', '--explore', 'exhaustive', '--found', d],
    ];
    for (const args of paths) {
      const json = cli(...args, '--json');
      const parsed = JSON.parse(json.stdout) as unknown;
      const row = (Array.isArray(parsed) ? parsed[0] : parsed) as { verdict: string; runs: number; firstFailureRun: number | null; firstFailureMs: number | null };
      expect(row.verdict).toBe('fails');
      // The search stops at its first failing schedule: its index is the count of schedules run.
      expect(row.firstFailureRun).toBe(row.runs);
      expect(row.firstFailureMs).toEqual(expect.any(Number));
      const text = cli(...args);
      expect(text.stdout).toMatch(new RegExp(`│ schedule ${row.runs}, \\d+ ms +│`));
    }
  });

  it('refuses --unreduced without --explore exhaustive (exit 2, nothing run)', () => {
    const r = cli('check', '--unreduced');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--unreduced needs --explore exhaustive/);
  });
});
