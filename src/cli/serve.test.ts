import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, ServerProcess } from '../real/child.js';
import { httpJson, httpSend } from '../real/http-transport.js';

/** Polls `cond` until it holds; fails after `boundMs` (generous: a loaded machine is slow, never wrong). */
async function waitFor(what: string, cond: () => Promise<boolean>, boundMs = 20_000): Promise<void> {
  const until = Date.now() + boundMs;
  while (!(await cond())) {
    if (Date.now() > until) throw new Error(`timed out after ${boundMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'retrysim-serve-cli-'));
const live: ServerProcess[] = [];

afterAll(async () => {
  for (const s of live) await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('retrysim serve (CLI)', () => {
  it('prints the bound port for --port 0, and a busy port is a clear error with exit 1', async () => {
    const a = new ServerProcess({ variant: 'naive', dbPath: join(dir, 'a.db') });
    live.push(a);
    const port = await a.start();
    expect(port).toBeGreaterThan(0);
    expect(a.output).toMatch(new RegExp(`listening on http://127\\.0\\.0\\.1:${port}`));
    const r = await runCli(['serve', '--variant', 'naive', '--db', join(dir, 'b.db'), '--port', String(port)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`port ${port} .*already in use`));
  });

  it('an unwritable database file is a clear error with exit 1', async () => {
    const missingDir = await runCli(['serve', '--variant', 'naive', '--db', join(dir, 'no', 'such', 'dir', 't.db')]);
    expect(missingDir.code).toBe(1);
    expect(missingDir.stderr).toMatch(/cannot open database file .* for writing/);
    const aDirectory = join(dir, 'adir');
    mkdirSync(aDirectory);
    const isDir = await runCli(['serve', '--variant', 'naive', '--db', aDirectory]);
    expect(isDir.code).toBe(1);
    expect(isDir.stderr).toMatch(/cannot open database file/);
  });

  it('bad flags exit 2 with a message; a lease that is too short is refused', async () => {
    // Independent processes: start them together.
    const [unknown, variant, noDb, port, lease] = await Promise.all([
      runCli(['serve', '--variant', 'naive', '--db', 'x.db', '--bogus']),
      runCli(['serve', '--variant', 'nope', '--db', 'x.db']),
      runCli(['serve', '--variant', 'naive']),
      runCli(['serve', '--variant', 'naive', '--db', 'x.db', '--port', '70000']),
      runCli(['serve', '--variant', 'key_atomic', '--db', join(dir, 'l.db'), '--lease-ms', '1000']),
    ]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--bogus'/);
    expect(variant.code).toBe(2);
    expect(variant.stderr).toMatch(/--variant must be one of/);
    expect(noDb.code).toBe(2);
    expect(noDb.stderr).toMatch(/--db FILE is required/);
    expect(port.code).toBe(2);
    // One line naming the flag (as check says it), not the help page after it: with --service the
    // help's tracker routes (POST /reports) say nothing about the user's service.
    expect(port.stderr.trim()).toBe("retrysim serve: --port must be an integer 0–65535, got '70000'");
    expect(noDb.stderr.trim()).toBe('retrysim serve: --db FILE is required');
    const servicePort = await runCli(['serve', '--service', 'examples/payments-atomic/service.ts', '--db', join(dir, 'p.db'), '--port', '-1']);
    expect(servicePort.code).toBe(2);
    expect(servicePort.stderr.trim().split('\n')).toHaveLength(1);
    expect(servicePort.stderr).not.toContain('/reports');
    expect(lease.code).toBe(1);
    expect(lease.stderr).toMatch(/lease 1000 ms must exceed client timeout 2000 ms/);
  });

  it('SIGTERM drains the in-flight request (it still gets its 201), then exits 0', async () => {
    const s = new ServerProcess({ variant: 'naive', dbPath: join(dir, 'term.db'), slowMs: 3000 });
    live.push(s);
    const port = await s.start();
    const pending = httpSend(port, { method: 'POST', path: '/reports', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ run_id: 'r', module: 'm', title: 't', steps: '' }) }, 30_000);
    // SIGTERM only once the server holds the request (the admin GET that asks counts itself too),
    // instead of sleeping and hoping it arrived: under load a fixed sleep was too short.
    await waitFor('the POST to be in flight', async () => ((await httpJson(port, 'GET', '/_admin/counts')).json as { inflight: number }).inflight >= 2);
    const exit = s.stop();
    const res = await pending;
    expect(res.kind === 'response' && res.status).toBe(201);
    expect(await exit).toEqual({ code: 0, signal: null });
    expect(s.output).toMatch(/SIGTERM: stopping; draining 1 in-flight/);
  });

  it('SIGTERM ends the process (exit 0) when the service left an interval running, instead of its next tick throwing on the closed database', async () => {
    const s = new ServerProcess({ module: 'src/real/fixtures/interval-sweeper.ts', dbPath: join(dir, 'sweeper.db') });
    live.push(s);
    const port = await s.start();
    const res = await httpSend(port, { method: 'POST', path: '/items', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ run: 'r' }) }, 30_000);
    expect(res.kind === 'response' && res.status).toBe(201);
    expect(await s.stop()).toEqual({ code: 0, signal: null });
    expect(s.output).toMatch(/retrysim serve: stopped\n?$/);
    expect(s.output).not.toMatch(/connection is not open/);
  });

  it('--help exits 0', async () => {
    const r = await runCli(['serve', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--variant V/);
  });
});

