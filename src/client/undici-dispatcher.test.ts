// A client sending through undici — the undici package's request() or
// fetch, or Node's own fetch held from before retrysim loaded — never meets
// the global fetch the simulation routes. While a run is active undici's
// global dispatcher refuses at once: no request leaves the simulation (no
// DNS query for service.sim, no real socket), and the line names undici,
// not an import order that cannot help.
import diagnostics from 'node:diagnostics_channel';
import dns from 'node:dns';
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { refuseUndiciDispatcher } from './undici-dispatcher.js';

const tmp = tempDirs();
const SLOT = Symbol.for('undici.globalDispatcher.1');
const slot = () => (globalThis as unknown as Record<symbol, unknown>)[SLOT];

/** Real requests undici created (its diagnostics channel) while `f` ran. */
async function realRequests<T>(f: () => Promise<T>): Promise<{ value: T; created: string[] }> {
  const created: string[] = [];
  const seen = (m: unknown) => {
    const r = (m as { request?: { method?: string; origin?: string; path?: string } }).request;
    created.push(`${r?.method} ${r?.origin}${r?.path}`);
  };
  diagnostics.subscribe('undici:request:create', seen);
  try {
    return { value: await f(), created };
  } finally {
    diagnostics.unsubscribe('undici:request:create', seen);
  }
}

describe('undici\'s global dispatcher during a client run', () => {
  let undo: (() => void) | undefined;
  afterEach(() => undo?.());

  it('check --client on a client using undici\'s request(): one line naming undici, exit 2, no file, and no request left the simulation', async () => {
    const dir = tmp('rs-undici-');
    const { value: r, created } = await realRequests(() => runMain(['check', '--client', 'src/client/fixtures/undici-request-client.ts', '--runs', '10', '--found', dir]));
    expect(r.code, r.out + r.err).toBe(2);
    expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
      "retrysim check: client module 'undici-request-client': it sent POST http://service.sim/reports through undici — the undici package's fetch or request, or Node's own fetch held from before retrysim was loaded — which the simulation does not carry: only the fetch run(fetch, op) is handed, or the global fetch, reaches the simulated service (in a vitest file, import retrysim/vitest before the client's module)",
    ]);
    expect(created).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  it('check --client on a client using undici with a dispatcher of its own (new Agent()): its socket is refused before any DNS query, one line naming the dispatcher, exit 2, no file', async () => {
    // Until 2026-12 such a client's requests went to the real resolver for service.sim.
    const dir = tmp('rs-undici-agent-');
    const looked: string[] = [];
    const lookup = dns.lookup;
    (dns as { lookup: unknown }).lookup = (host: string, ...rest: unknown[]) => (looked.push(host), Reflect.apply(lookup, dns, [host, ...rest]));
    try {
      const r = await runMain(['check', '--client', 'src/client/fixtures/undici-own-agent.ts', '--runs', '10', '--found', dir]);
      expect(r.code, r.out + r.err).toBe(2);
      expect(r.err.split('\n').filter((l) => l.startsWith('retrysim check:'))).toEqual([
        "retrysim check: client module 'undici-own-agent': it sent POST http://service.sim/reports through undici with a dispatcher of its own (dispatcher: new Agent(), a Pool or a Client), whose socket to service.sim:80 was refused before any DNS query: the simulation does not carry it; only the fetch run(fetch, op) is handed, or the global fetch, reaches the simulated service (drop the dispatcher option during checks, or pass the fetch as a parameter)",
      ]);
    } finally {
      (dns as { lookup: unknown }).lookup = lookup;
    }
    expect(looked).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  it('refuses through the handler, asynchronously, naming the call; afterwards the slot holds undici\'s own dispatcher again', async () => {
    new Response(''); // Node's undici loaded: its Agent is in the slot
    const before = slot();
    const calls: string[] = [];
    undo = refuseUndiciDispatcher((call) => (calls.push(call), new Error('refused')));
    const d = slot() as { dispatch(o: object, h: object): boolean };
    expect(d).not.toBe(before);
    const got = new Promise<Error>((resolve) => d.dispatch({ origin: 'http://service.sim/', path: '/reports', method: 'post' }, { onError: resolve }));
    const newer = new Promise<Error>((resolve) => d.dispatch({ origin: new URL('https://x.test'), path: '/a' }, { onResponseError: (_c: unknown, e: Error) => resolve(e) }));
    expect((await got).message).toBe('refused');
    expect((await newer).message).toBe('refused');
    expect(calls).toEqual(['POST http://service.sim/reports', 'GET https://x.test/a']);
    undo();
    undo = undefined;
    expect(slot()).toBe(before);
    expect(slot()).toBeDefined();
  });
});
