/**
 * `serve` promises exit 0 after SIGTERM. A script that waits for the
 * `listening on …` line and then stops the server (a CI job, a test's
 * teardown) got exit 143 about one time in three (found by a newcomer pass,
 * 2 of 5 from the installed tarball): the line was printed before the
 * SIGTERM handler was installed, with the watchdog thread's start between
 * them, so a signal in that window took Node's default action. The line now
 * comes once the handler is in place. The window is a few milliseconds, so
 * the test stops the server at the line several times over.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const bin = join(import.meta.dirname, '..', '..', 'bin', 'retrysim.js');

/** Starts `serve`, sends SIGTERM the moment its listening line is out, and resolves to its exit. */
function stopAtListening(db: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [bin, 'serve', '--variant', 'naive', '--db', db, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let sent = false;
    const onData = (c: Buffer) => {
      out += c.toString('utf8');
      if (!sent && /listening on http/.test(out)) {
        sent = true;
        p.kill('SIGTERM');
      }
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.on('error', reject);
    p.on('exit', (code, signal) => resolve({ code, signal, out }));
  });
}

describe('serve stopped at its listening line', () => {
  it('exits 0, having drained, every time', async () => {
    const d = tmp('rs-serve-term-');
    const ends = [];
    for (let i = 0; i < 12; i++) ends.push(await stopAtListening(join(d, `t${i}.db`)));
    for (const e of ends) {
      expect({ code: e.code, signal: e.signal }, e.out).toEqual({ code: 0, signal: null });
      expect(e.out).toMatch(/SIGTERM: stopping/);
    }
  }, 120_000);
});
