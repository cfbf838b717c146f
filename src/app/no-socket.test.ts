// A hosted app that opens a TCP connection of its own (a real Redis client
// created at module level, a driver, a call to another service) reached
// the machine's network from inside the simulation: a refused
// connection's unhandled 'error' ended retrysim with Node's stack (exit 1,
// which reads as "fails"), and an accepted one ran on real time. It is now
// refused where the app connects and named in one line, exit 2
// (src/app/no-socket.ts); no connection is made.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess, runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const fixture = 'src/app/fixtures/own-connection-app.ts';
const args = () => ['check', '--app', fixture, '--runs', '10', '--faults', 'loseResponse', '--found', tmp('rs-no-socket-')];

afterEach(() => {
  delete process.env.OWN_CONNECTION_PORT;
});

describe('an app that opens a TCP connection of its own', () => {
  it('to a listening port: one line naming host and port, exit 2, and the port saw no connection', async () => {
    let connections = 0;
    const server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    process.env.OWN_CONNECTION_PORT = String(port);
    try {
      const r = await runMain(args());
      // Let a connection that was made reach the server before counting.
      await new Promise((r) => setTimeout(r, 50));
      expect(r.code, r.out).toBe(2);
      expect(r.err.split('\n')).toHaveLength(1);
      expect(r.err).toBe(`retrysim check: app 'own-connection-app': POST /orders: the app opened a TCP connection to 127.0.0.1:${port} (a real Redis or database client, or a call to another service): a simulated process reaches only the simulated store, on virtual time; give every store call to the client app({ redis }) hands the factory (env.redis) — also a client your modules create at their top level — instead of one that connects`);
      expect(connections).toBe(0);
    } finally {
      await new Promise((r) => server.close(r));
    }
  }, 120_000);

  it('to a closed port, as a user runs it: the same one line, exit 2 (was Node\'s stack for the unhandled ECONNREFUSED, exit 1)', async () => {
    const closed = net.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const r = runCliProcess(args(), { OWN_CONNECTION_PORT: String(port) });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(new RegExp(`^retrysim check: app 'own-connection-app': POST /orders: the app opened a TCP connection to 127\\.0\\.0\\.1:${port} `));
  }, 120_000);
});
