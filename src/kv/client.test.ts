import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientClosedError, kvClient, setKvSink } from './client.js';
import { KvStore, setupKv } from './store.js';

/** A client wired straight to a fresh store at time `now` (the host's interleaving points left out). */
function wired(now = 0) {
  const db = new Database(':memory:');
  setupKv(db);
  const store = new KvStore(db);
  const unsupported: string[] = [];
  const sent: string[] = [];
  setKvSink({ submit: async (c) => (sent.push(c.name), c.run(store, now)), unsupported: (m) => unsupported.push(m) });
  return { redis: kvClient() as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>, store, unsupported, sent };
}

afterEach(() => setKvSink(undefined));

describe("node-redis's raw command names", () => {
  it('SET, GET, DEL, INCR, EXPIRE, PEXPIRE, TTL and PTTL are the methods the store has (node-redis answers to both spellings)', async () => {
    const { redis, unsupported } = wired();
    expect(await redis.SET!('k', 'v', { NX: true })).toBe('OK');
    expect(await redis.SET!('k', 'w', { NX: true })).toBeNull();
    expect(await redis.GET!('k')).toBe('v');
    expect(await redis.INCR!('n')).toBe(1);
    expect(await redis.PEXPIRE!('k', 2_000)).toBe(1);
    expect(await redis.PTTL!('k')).toBe(2_000);
    expect(await redis.EXPIRE!('k', 3)).toBe(1);
    expect(await redis.TTL!('k')).toBe(3);
    expect(await redis.DEL!('k')).toBe(1);
    expect(unsupported).toEqual([]);
    // A raw name of a command the store lacks is still named as such.
    expect(() => redis.LPUSH!('l', 'v')).toThrow(/redis\.LPUSH\(\), which the simulated store does not have/);
  });
});

describe('what node-redis refuses to send', () => {
  it('a SET whose value is not a string, number or Buffer is a TypeError, and nothing is written', async () => {
    const { redis, store } = wired();
    await expect(redis.set!('k', undefined)).rejects.toThrow(/^Invalid argument type \(the value of SET k is undefined/);
    await expect(redis.set!('k', { id: 1 })).rejects.toThrow(/Invalid argument type .* is object/);
    expect(store.get('k', 0)).toBeNull();
    expect(await redis.set!('k', 7)).toBe('OK');
    expect(store.get('k', 0)).toBe('7');
  });
});

describe("ioredis's positional SET options", () => {
  it("are named in one line (the store speaks node-redis), not dropped into a plain SET", async () => {
    const { redis, store, unsupported } = wired();
    expect(() => redis.set!('k', 'v', 'PX', 30_000, 'NX')).toThrow(/the app called redis\.set\(key, value, "PX", …\) with ioredis's positional options \(node-redis takes one object: set\(key, value, \{ NX: true, PX: 30000 \}\)\), which the simulated store does not have/);
    expect(unsupported).toEqual([`set(key, value, "PX", …) with ioredis's positional options (node-redis takes one object: set(key, value, { NX: true, PX: 30000 }))`]);
    expect(store.get('k', 0)).toBeNull();
  });
});

describe("the connection's surface, as node-redis has it for a connected client", () => {
  it('isOpen and isReady are true; the guarded connect() passes, a bare one rejects as node-redis does (Socket already opened)', async () => {
    const { redis, unsupported } = wired();
    const c = redis as unknown as { isOpen: boolean; isReady: boolean; connect(): Promise<unknown> };
    expect(c.isOpen).toBe(true);
    expect(c.isReady).toBe(true);
    if (!c.isOpen) await c.connect();
    // @redis/client v4.7.1 and v5.12.1, lib/client/socket.ts: `if (this.#isOpen) throw new Error('Socket already opened')`.
    await expect(c.connect()).rejects.toThrow(/^Socket already opened \(retrysim: .*if \(!redis\.isOpen\) await redis\.connect\(\)\)$/);
    expect(c.isOpen).toBe(true);
    expect(unsupported).toEqual([]);
  });

  it("on/once/off register listeners for the connection's events and return the client (it is node-redis's EventEmitter)", async () => {
    const { redis, unsupported } = wired();
    const c = redis as unknown as { on: (e: string, f: (x: unknown) => void) => unknown; once: (e: string, f: () => void) => unknown; off: (e: string, f: (x: unknown) => void) => unknown; listenerCount(e: string): number };
    const log = (_e: unknown) => undefined;
    for (const e of ['error', 'connect', 'ready', 'end', 'reconnecting']) expect(c.on(e, log)).toBe(c);
    expect(c.once('ready', () => undefined)).toBe(c);
    expect(c.listenerCount('error')).toBe(1);
    expect(c.listenerCount('ready')).toBe(2);
    expect(c.off('error', log)).toBe(c);
    expect(c.listenerCount('error')).toBe(0);
    // The client is usable after the setup, and no command went to the store for it.
    expect(await redis.set!('k', 'v', { NX: true })).toBe('OK');
    expect(unsupported).toEqual([]);
  });

  it("ping() answers PONG (or its message) without a store command; PING is node-redis's raw name for it", async () => {
    const { redis, sent, unsupported } = wired();
    expect(await redis.ping!()).toBe('PONG');
    expect(await redis.ping!('hi')).toBe('hi');
    expect(await redis.PING!()).toBe('PONG');
    expect(sent).toEqual([]);
    expect(unsupported).toEqual([]);
  });

  it('after quit() commands reject with ClientClosedError, nothing reaches the store, and connect() opens it again', async () => {
    const { redis, store, sent } = wired();
    const c = redis as unknown as { isOpen: boolean; isReady: boolean; connect(): Promise<unknown>; on(e: string, f: () => void): unknown };
    let ended = 0;
    c.on('end', () => ended++);
    expect(await redis.quit!()).toBe('OK');
    expect(ended).toBe(1);
    expect([c.isOpen, c.isReady]).toEqual([false, false]);
    await expect(redis.set!('k', 'v')).rejects.toThrow(ClientClosedError);
    await expect(redis.get!('k')).rejects.toThrow(/^The client is closed$/);
    await expect(redis.ping!()).rejects.toThrow(ClientClosedError);
    await expect(redis.quit!()).rejects.toThrow(ClientClosedError);
    expect(sent).toEqual([]);
    expect(store.get('k', 0)).toBeNull();
    expect(await c.connect()).toBe(c);
    expect(c.isOpen).toBe(true);
    expect(await redis.set!('k', 'v')).toBe('OK');
    expect(sent).toEqual(['set']);
  });

  it('close(), disconnect() and destroy() close it too; a second one is ClientClosedError (destroy throws at once, as v5 does)', async () => {
    for (const how of ['close', 'disconnect', 'destroy'] as const) {
      const { redis } = wired();
      const closing = redis[how]!();
      if (how !== 'destroy') await closing;
      expect((redis as unknown as { isOpen: boolean }).isOpen).toBe(false);
      await expect(redis.incr!('n')).rejects.toThrow(ClientClosedError);
      if (how === 'destroy') expect(() => redis.destroy!()).toThrow(ClientClosedError);
      else await expect(redis[how]!()).rejects.toThrow(ClientClosedError);
    }
  });

  it('each client is open on its own: one process closing its client leaves another\'s open', async () => {
    const { redis } = wired();
    const other = kvClient();
    await redis.quit!();
    expect(other.isOpen).toBe(true);
    expect(await other.set('k', 'v')).toBe('OK');
  });
});
