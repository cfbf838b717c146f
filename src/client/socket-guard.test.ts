// During a client run TCP sockets are refused before any DNS query (undici
// with a dispatcher of its own); local IPC paths pass — tsx's loader
// connects to its pipe when a module loads afresh during a run, and was
// refused as the client's socket (the packed example's fixed client failed
// its vitest property with "it opened a socket to /tmp/tsx-0/….pipe").
import net from 'node:net';
import tls from 'node:tls';
import { afterEach, describe, expect, it } from 'vitest';
import { guardSockets } from './socket-guard.js';

describe('the socket guard of a client run', () => {
  afterEach(() => guardSockets(undefined));

  it('refuses a TCP connect (net and tls, options and port forms), naming host and port; passes an IPC path', async () => {
    const calls: string[] = [];
    guardSockets((call) => (calls.push(call), new Error(`refused ${call}`)));
    expect(() => net.connect({ host: 'service.sim', port: 80 })).toThrow('refused service.sim:80');
    expect(() => net.createConnection(8080, 'service.sim')).toThrow('refused service.sim:8080');
    expect(() => tls.connect({ host: 'service.sim' })).toThrow('refused service.sim:443');
    const pipe = net.connect({ path: '/nonexistent/retrysim-test.pipe' });
    const code = await new Promise<string | undefined>((resolve) => pipe.on('error', (e: NodeJS.ErrnoException) => resolve(e.code)));
    expect(code).toBe('ENOENT'); // the real connect ran
    expect(calls).toEqual(['service.sim:80', 'service.sim:8080', 'service.sim:443']);
  });
});
