import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { kvClient, kvTraceWords, setKvSink, type KvCommand } from './client.js';
import { KvStore, setupKv } from './store.js';

// SETEX/PSETEX, EXISTS, GETDEL, INCRBY/DECR/DECRBY: commands that hand-written
// idempotency middleware uses (a tutorial's `setEx(key, 86400, answer)`, an
// `exists(key)` guard). Until 2026-12 each was refused (exit 2), so such an
// app could not run unmodified. Each is a step the store already had (a read
// is `kv.get`, SETEX is `kv.set`, GETDEL `kv.del`, INCRBY `kv.incr`), named
// in the trace's call.

function wired() {
  let now = 0;
  const db = new Database(':memory:');
  setupKv(db);
  const store = new KvStore(db);
  const sent: Array<{ c: KvCommand; words: string }> = [];
  setKvSink({
    submit: async (c) => {
      try {
        const value = c.run(store, now);
        sent.push({ c, words: `${kvTraceWords(c, { value }).call} → ${kvTraceWords(c, { value }).answer}` });
        return value;
      } catch (error) {
        sent.push({ c, words: `${kvTraceWords(c, { error }).call} → ${kvTraceWords(c, { error }).answer}` });
        throw error;
      }
    },
  });
  return { redis: kvClient() as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>, store, sent, at: (ms: number) => void (now = ms) };
}

afterEach(() => setKvSink(undefined));

describe('SETEX and PSETEX: SET with an expiry, as Redis has them', () => {
  it('write the value with its time to live (the kv.set step), refuse a non-positive or fractional count and write nothing', async () => {
    const { redis, store, sent, at } = wired();
    expect(await redis.setEx!('idem:k', 30, '{"id":1}')).toBe('OK');
    expect(store.pttl('idem:k', 0)).toBe(30_000);
    expect(await redis.pSetEx!('lock:k', 1_500, 'me')).toBe('OK');
    at(1_499);
    expect(await redis.get!('lock:k')).toBe('me');
    at(1_500);
    expect(await redis.get!('lock:k')).toBeNull();
    await expect(redis.setEx!('x', 0, 'v')).rejects.toThrow("ERR invalid expire time in 'setex' command");
    await expect(redis.pSetEx!('x', -5, 'v')).rejects.toThrow("ERR invalid expire time in 'psetex' command");
    await expect(redis.setEx!('x', 1.5, 'v')).rejects.toThrow('ERR value is not an integer or out of range');
    await expect(redis.setEx!('x', 10, undefined)).rejects.toThrow(/^Invalid argument type/);
    expect(store.get('x', 1_500)).toBeNull();
    // A count given as text is a count, as Redis reads it.
    expect(await redis.SETEX!('y', '2', 'v')).toBe('OK');
    expect(store.pttl('y', 1_500)).toBe(2_000);
    expect(sent.filter((s) => s.c.verb === 'SETEX' || s.c.verb === 'PSETEX').every((s) => s.c.name === 'set')).toBe(true);
    expect(sent[0]!.words).toBe('SETEX idem:k 30 "{"id":1}" → OK');
  });
});

describe('EXISTS, GETDEL, INCRBY, DECR, DECRBY', () => {
  it('answer as Redis does, each on the step of the command it is a kind of', async () => {
    const { redis, store, sent, at } = wired();
    expect(await redis.exists!('a')).toBe(0);
    await redis.set!('a', '1', { PX: 10 });
    await redis.set!('b', 'x');
    expect(await redis.exists!(['a', 'b', 'a', 'c'])).toBe(3);
    at(10);
    expect(await redis.EXISTS!('a')).toBe(0); // expired
    expect(await redis.getDel!('b')).toBe('x');
    expect(await redis.getDel!('b')).toBeNull();
    expect(store.get('b', 10)).toBeNull();
    expect(await redis.incrBy!('n', 5)).toBe(5);
    expect(await redis.decr!('n')).toBe(4);
    expect(await redis.DECRBY!('n', 3)).toBe(1);
    expect(await redis.INCRBY!('n', '10')).toBe(11);
    await expect(redis.incrBy!('n', 1.5)).rejects.toThrow('ERR value is not an integer or out of range');
    await expect(redis.decr!('b2')).resolves.toBe(-1);
    await redis.set!('s', 'abc');
    await expect(redis.incrBy!('s', 1)).rejects.toThrow('ERR value is not an integer or out of range');
    const steps = Object.fromEntries(sent.filter((s) => s.c.verb !== undefined).map((s) => [s.c.verb, s.c.name]));
    expect(steps).toEqual({ EXISTS: 'get', GETDEL: 'del', INCRBY: 'incr', DECR: 'incr', DECRBY: 'incr' });
    expect(sent.find((s) => s.c.verb === 'EXISTS')!.words).toBe('EXISTS a → 0');
    expect(sent.find((s) => s.c.verb === 'GETDEL')!.words).toBe('GETDEL b → "x"');
  });

  it('queue in a MULTI and run in its one step, the trace naming them', async () => {
    const { redis, store, sent } = wired();
    const m = (redis.multi as unknown as () => Record<string, (...a: unknown[]) => unknown>)();
    const chain = m.setEx!('idem:k', 60, 'done') as typeof m;
    (chain.incrBy!('seq', 2) as typeof m).exists!('idem:k');
    expect(await chain.exec!()).toEqual(['OK', 2, 1]);
    expect(store.pttl('idem:k', 0)).toBe(60_000);
    expect(sent.at(-1)!.c.args).toBe('(SETEX idem:k 60 "done"; INCRBY seq 2; EXISTS idem:k)');
  });
});

describe("a spelling node-redis does not have (ioredis's lower-case names)", () => {
  it('is named with the spelling node-redis has, not left undefined (a TypeError the framework made a 500)', () => {
    const unsupported: string[] = [];
    setKvSink({ submit: async () => undefined, unsupported: (m) => unsupported.push(m) });
    const redis = kvClient() as unknown as Record<string, (...a: unknown[]) => unknown>;
    expect(() => redis.setex!('k', 10, 'v')).toThrow(/the app called redis\.setex\(\) \(node-redis spells it setEx\(\); ioredis's lower-case names are not simulated\), which the simulated store does not have/);
    const m = (redis.multi as () => Record<string, (...a: unknown[]) => unknown>)();
    expect(() => m.incrby!('n', 1)).toThrow(/multi\(\)\.incrby\(\) \(node-redis spells it incrBy\(\)/);
    expect(unsupported).toHaveLength(2);
    // What node-redis has in no spelling is named as before; a property nobody has stays undefined.
    expect(() => redis.lPush!('l', 'v')).toThrow(/redis\.lPush\(\), which the simulated store does not have/);
    expect(redis.then).toBeUndefined();
    expect(redis.somethingElse).toBeUndefined();
  });
});

describe('hashes: HSET, HGET, HGETALL, HDEL, HINCRBY, HLEN', () => {
  it('answer as Redis does; a hash is a key of its own kind (WRONGTYPE), expires and is deleted as a string is', async () => {
    const { redis, store, sent, at } = wired();
    expect(await redis.hSet!('h', 'status', 'processing')).toBe(1);
    expect(await redis.hSet!('h', { status: 'done', answer: '{"id":1}' })).toBe(1);
    expect(await redis.hSet!('h', new Map([['n', 1]]))).toBe(1);
    expect(await redis.HSET!('h', ['a', 'x', 'b', 'y'])).toBe(2);
    expect(await redis.hGet!('h', 'status')).toBe('done');
    expect(await redis.hGet!('h', 'nope')).toBeNull();
    expect(await redis.hGet!('missing', 'f')).toBeNull();
    const all = (await redis.hGetAll!('h')) as Record<string, string>;
    expect({ ...all }).toEqual({ status: 'done', answer: '{"id":1}', n: '1', a: 'x', b: 'y' });
    expect(Object.getPrototypeOf(all)).toBeNull();
    expect({ ...((await redis.hGetAll!('missing')) as object) }).toEqual({});
    expect(await redis.hIncrBy!('h', 'n', 4)).toBe(5);
    await expect(redis.hIncrBy!('h', 'status', 1)).rejects.toThrow('ERR hash value is not an integer');
    expect(await redis.hLen!('h')).toBe(5);
    expect(await redis.hDel!('h', 'a', 'b', 'zz')).toBe(2);
    // The other kind: Redis's WRONGTYPE, nothing changed.
    await expect(redis.get!('h')).rejects.toThrow(/^WRONGTYPE/);
    await expect(redis.incr!('h')).rejects.toThrow(/^WRONGTYPE/);
    await expect(redis.getDel!('h')).rejects.toThrow(/^WRONGTYPE/);
    await redis.set!('s', 'text');
    await expect(redis.hSet!('s', 'f', 'v')).rejects.toThrow(/^WRONGTYPE/);
    await expect(redis.hGet!('s', 'f')).rejects.toThrow(/^WRONGTYPE/);
    expect(store.get('s', 0)).toBe('text');
    // A field named like a prototype's is a field.
    expect(await redis.hSet!('p', '__proto__', 'v')).toBe(1);
    expect(await redis.hGet!('p', '__proto__')).toBe('v');
    // Common to both kinds: EXISTS, EXPIRE, TTL, DEL; SET replaces a hash.
    expect(await redis.exists!(['h', 's'])).toBe(2);
    expect(await redis.expire!('h', 2)).toBe(1);
    expect(await redis.hSet!('h', 'later', 'v')).toBe(1); // HSET keeps the key's expiry
    expect(await redis.pTTL!('h')).toBe(2_000);
    at(2_000);
    expect(await redis.hGetAll!('h')).toEqual({});
    expect(await redis.del!('p')).toBe(1);
    await redis.hSet!('r', 'f', 'v');
    expect(await redis.set!('r', 'plain')).toBe('OK');
    expect(await redis.get!('r')).toBe('plain');
    // The last field deleted deletes the key.
    await redis.hSet!('one', 'f', 'v');
    expect(await redis.hDel!('one', ['f'])).toBe(1);
    expect(await redis.exists!('one')).toBe(0);
    // What node-redis cannot send is its TypeError, and nothing is sent.
    const before = sent.length;
    await expect(redis.hSet!('h2', { f: undefined })).rejects.toThrow(/^Invalid argument type \(the value of HSET h2 f is undefined/);
    await expect(redis.hSet!('h2', ['f'])).rejects.toThrow(/needs pairs/);
    expect(sent.length).toBe(before);
    // The effects view reads a hash as the JSON of its fields.
    await redis.hSet!('order:1', { ref: 'run-1', tenant: 'default' });
    expect(store.scan('order:')).toEqual([['order:1', '{"ref":"run-1","tenant":"default"}']]);
    // Each on the step of its kind, named in the trace.
    const steps = Object.fromEntries(sent.filter((x) => x.c.verb?.startsWith('H')).map((x) => [x.c.verb, x.c.name]));
    expect(steps).toEqual({ HSET: 'set', HGET: 'get', HGETALL: 'get', HINCRBY: 'incr', HLEN: 'get', HDEL: 'del' });
    expect(sent.find((x) => x.c.verb === 'HGETALL')!.words).toBe('HGETALL h → "{"status":"done","answer":"{\\"id\\":1}","…"');
  });

  it('queue in a MULTI (HSET and EXPIRE as one step)', async () => {
    const { redis, store } = wired();
    const m = (redis.multi as unknown as () => Record<string, (...a: unknown[]) => unknown>)();
    const chain = m.hSet!('idem:k', { status: 'done', answer: '{"id":7}' }) as typeof m;
    (chain.expire!('idem:k', 60) as typeof m).hGet!('idem:k', 'answer');
    expect(await chain.exec!()).toEqual([2, 1, '{"id":7}']);
    expect(store.pttl('idem:k', 0)).toBe(60_000);
  });
});
