// An app file written as its own entry point listens at its top level
// (`server.listen(PORT)`). Until 2026-12 loading it for a check bound the
// port for real, and the next load — one per simulated process, or the fresh
// process replaying a counterexample — died of EADDRINUSE as an unhandled
// 'error' event (Node's stack). A top level's listen now binds nothing:
// retrysim delivers the requests to the listener app() returns.
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCliProcess } from '../testing/cli.js';
import { loadService } from '../service/load.js';
import { loadingUserModule } from './no-listen.js';

/** The fixture's port (importing the fixture here would run its top level outside retrysim's load, and bind it). */
const PORT = 39518;
const fixture = fileURLToPath(new URL('./fixtures/listens-at-load-app.ts', import.meta.url));
const found = fileURLToPath(new URL('../../.retrysim/test-listen-at-load', import.meta.url));

/** Whether PORT on loopback is free: bound by nobody. */
const free = () => new Promise<boolean>((done) => {
  const s = net.createServer();
  s.once('error', () => done(false));
  s.listen(PORT, '127.0.0.1', () => s.close(() => done(true)));
});

describe('an app module that listens at its top level', () => {
  it('loads without binding its port, and a server of the host binds it afterwards', async () => {
    await loadService(fixture);
    expect(await free()).toBe(true);
  });

  it('a top level listening sees its callback, its address and its close, as if bound', async () => {
    const seen = await loadingUserModule(async () => {
      const s = net.createServer();
      const listened = new Promise<void>((r) => s.listen(4567, '127.0.0.1', r));
      await listened;
      const address = s.address();
      const listening = s.listening;
      await new Promise<void>((r) => s.close(() => r()));
      return { address, listening, after: s.address() };
    });
    expect(seen).toEqual({ address: { address: '127.0.0.1', family: 'IPv4', port: 4567 }, listening: true, after: null });
  });

  it('check --app holds, loaded once and once per simulated process', () => {
    for (const env of [{}, { RETRYSIM_APP_PER_PROCESS: '1' }] as Array<Record<string, string>>) {
      const p = runCliProcess(['check', '--app', fixture, '--runs', '20', '--json', '--found', found], env);
      expect(p.status, p.stderr).toBe(0);
      expect((JSON.parse(p.stdout) as { verdict: string }).verdict).toBe('holds');
    }
  }, 240_000);
});
