import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { kvClient, setKvSink } from './client.js';
import { KvStore, setupKv } from './store.js';

/** A client wired straight to a fresh store at time `now` (the host's interleaving points left out). */
function wired(now = 0) {
  const db = new Database(':memory:');
  setupKv(db);
  const store = new KvStore(db);
  const unsupported: string[] = [];
  setKvSink({ submit: async (c) => c.run(store, now), unsupported: (m) => unsupported.push(m) });
  return { redis: kvClient() as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>, store, unsupported };
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
    expect(() => redis.HSET!('h', 'f', 'v')).toThrow(/redis\.HSET\(\), which the simulated store does not have/);
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
