import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';

/**
 * The CLI ends when its command is done, whatever a user's module left
 * running: a client (or service) module that starts a real timer at import
 * — a token refresher, a metrics flush — kept the process alive after the
 * verdict was printed, forever (CI hung on it). Spawned as a user runs it:
 * `runMain` in-process cannot see it.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const tmp = tempDirs();

/** Runs the CLI; resolves with its exit code, or 'hung' when it is still alive `graceMs` after printing its verdict. */
function run(args: string[], graceMs: number): Promise<{ code: number | 'hung'; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [join(ROOT, 'bin', 'retrysim.js'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let timer: NodeJS.Timeout | undefined;
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // The verdict is the JSON document's end: from then on, the process has nothing left to do.
      if (timer === undefined && /\}\s*$/.test(out)) timer = setTimeout(() => { p.kill('SIGKILL'); resolve({ code: 'hung', out }); }, graceMs); // real-time: allowed (a hang detector around a child process, not a speed claim)
    });
    p.on('exit', (code) => {
      if (timer !== undefined) clearTimeout(timer);
      resolve({ code: code ?? 'hung', out });
    });
  });
}

describe('the CLI exits when its command is done', () => {
  it('check --client on a module that left a real setInterval running prints its verdict and exits 0', async () => {
    const r = await run(['check', '--client', 'src/client/fixtures/refresher-client.ts', '--runs', '20', '--json', '--found', tmp('rs-exits-')], 20_000);
    expect(JSON.parse(r.out)).toMatchObject({ client: 'refresher-client', verdict: 'holds' });
    expect(r.code).toBe(0);
  }, 90_000);
});
