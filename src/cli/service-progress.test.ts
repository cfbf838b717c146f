// `check --service` said nothing while it ran, nor while it shrank a failure
// — minutes, on a service whose runs are slow. Off a terminal it now prints a
// line every few seconds (shortened here), first the runs, then the shrinking.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const bin = new URL('../../bin/retrysim.js', import.meta.url).pathname;
const example = (p: string) => new URL(`../../examples/${p}`, import.meta.url).pathname;

describe('check --service progress off a terminal', () => {
  const check = (service: string, dir: string) => spawnSync(process.execPath, [bin, 'check', '--service', example(service), '--runs', '200', '--found', dir, '--json'], { encoding: 'utf8', env: { ...process.env, RETRYSIM_PROGRESS_LINE_MS: '20' }, timeout: 120_000 });

  it('prints the runs on stderr as they go; stdout and the exit code are as without it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'retrysim-progress-'));
    try {
      const r = check('payments-atomic/service.ts', dir);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/^check: service payments-atomic: \d+\/200 runs, \d+\/s$/m);
      expect((JSON.parse(r.stdout) as { verdict: string }).verdict).toBe('holds');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('then the shrinking of a failure, naming the run it failed at', () => {
    const dir = mkdtempSync(join(tmpdir(), 'retrysim-progress-'));
    try {
      const r = check('payments-check-then-insert/service.ts', dir);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/^check: service payments-check-then-insert: failed at run \d+; shrinking the counterexample: \d+ runs? tried$/m);
      const out = JSON.parse(r.stdout) as { verdict: string; firstFailureRun: number };
      expect(out.verdict).toBe('fails');
      expect(Number(/failed at run (\d+)/.exec(r.stderr)![1])).toBe(out.firstFailureRun);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an exhaustive search names the schedule it failed at, as its table and --json do', () => {
    const dir = mkdtempSync(join(tmpdir(), 'retrysim-progress-'));
    try {
      const r = spawnSync(process.execPath, [bin, 'check', '--service', example('payments-check-then-insert/service.ts'), '--explore', 'exhaustive', '--found', dir, '--json'], { encoding: 'utf8', env: { ...process.env, RETRYSIM_PROGRESS_LINE_MS: '1' }, timeout: 120_000 });
      expect(r.status, r.stderr).toBe(1);
      const out = JSON.parse(r.stdout) as { firstFailureRun: number };
      expect(r.stderr).toMatch(/^check: service payments-check-then-insert: failed at schedule \d+; shrinking the counterexample: \d+ runs? tried$/m);
      expect(Number(/failed at schedule (\d+)/.exec(r.stderr)![1])).toBe(out.firstFailureRun);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
