import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';
import { writeFileSync } from 'node:fs';

const tmp = tempDirs();
const root = join(import.meta.dirname, '..', '..');
const BIN = join(root, 'bin', 'retrysim.js');

/** A service module that re-exports one of the broken fixtures. */
function fixture(name: 'forEver' | 'dateSpin'): string {
  const f = join(tmp('rs-spin-'), 'service.ts');
  writeFileSync(f, `import { ${name} } from ${JSON.stringify(join(root, 'src', 'service', 'fixtures', 'broken.ts'))};\nexport default ${name};\n`);
  return f;
}

function start(args: string[]) {
  const p = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RETRYSIM_WATCHDOG_MS: '1500' } });
  let out = '';
  let err = '';
  p.stdout.on('data', (c) => (out += c));
  p.stderr.on('data', (c) => (err += c));
  const t0 = Date.now(); // real-time: allowed (the test bounds wall time)
  const ended = once(p, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as string | null, out, err, ms: Date.now() - t0 })); // real-time: allowed
  return { p, ended, out: () => out };
}

describe('a handler that never returns the thread does not hang the CLI', () => {
  it('check --service with a busy wait on the clock: one line naming the request and step, exit 2', async () => {
    const r = await start(['check', '--service', fixture('dateSpin'), '--runs', '3']).ended;
    expect(r.code, r.err).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/service 'date-spin': request s\d\/op1\.w0#\d+ \(POST \/items, after step 'write'\) busy-waits on the clock/);
  }, 60_000);

  it('check --service with for(;;): the watchdog names the request and step and ends the process within its limit', async () => {
    const r = await start(['check', '--service', fixture('forEver'), '--runs', '3']).ended;
    expect(r.signal).toBe('SIGKILL');
    expect(r.err).toMatch(/^retrysim: s\d\/op1\.w0#\d+ \(service 'for-ever', POST \/items, after step 'write'\) ran \d+ s without returning \(a busy loop\?\)/m);
    expect(r.ms).toBeLessThan(30_000);
  }, 60_000);

  it('serve --service with a handler in for(;;): the process still ends, within the watchdog limit, after SIGTERM', async () => {
    const s = start(['serve', '--service', fixture('forEver'), '--db', join(tmp('rs-db-'), 'db.sqlite'), '--port', '0']);
    for (let i = 0; i < 200 && !/listening on http:\/\/127\.0\.0\.1:(\d+)/.test(s.out()); i++) await new Promise((r) => setTimeout(r, 100)); // real-time: allowed (waiting for a real server)
    const port = Number(/listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(s.out())![1]);
    const wedged = fetch(`http://127.0.0.1:${port}/items`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'k' }, body: '{"run":"r"}' }).catch(() => 'no answer');
    await new Promise((r) => setTimeout(r, 300)); // real-time: allowed (let the request reach the loop)
    s.p.kill('SIGTERM');
    const r = await s.ended;
    expect(await wedged).toBe('no answer');
    expect(r.err).toMatch(/retrysim serve: the server \(service for-ever .*\) ran \d+ s without returning/);
    expect(r.ms).toBeLessThan(30_000);
  }, 60_000);
});
