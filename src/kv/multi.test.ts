import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientClosedError, kvClient, kvTraceWords, MultiErrorReply, setKvSink, WatchError, type KvCommand } from './client.js';
import { KvStore, setupKv } from './store.js';

/** node-redis's client and MULTI chain, loosely: every method chains or answers. */
type F = (...a: unknown[]) => Loose & Promise<unknown>;
interface Loose {
  multi: F; MULTI: F; exec: F; EXEC: F; set: F; SET: F; get: F; incr: F; INCR: F; del: F; pTTL: F; ttl: F; lPush: F;
  watch: F; WATCH: F; unwatch: F; quit: F; duplicate: F; connect: F; isOpen: boolean;
}

/** A client wired straight to a fresh store (the host's interleaving points left out); `lose` loses the answer of the commands it names. */
function wired(lose: (c: KvCommand) => boolean = () => false) {
  const db = new Database(':memory:');
  setupKv(db);
  const store = new KvStore(db);
  const unsupported: string[] = [];
  const sent: string[] = [];
  setKvSink({
    submit: async (c) => {
      sent.push(c.name);
      const v = c.run(store, 0);
      if (lose(c)) {
        c.lost?.();
        throw Object.assign(new Error('Socket closed unexpectedly'), { name: 'SocketClosedUnexpectedlyError' });
      }
      return v;
    },
    unsupported: (m) => unsupported.push(m),
  });
  const client = () => kvClient() as unknown as Loose;
  return { redis: client(), other: client(), store, unsupported, sent };
}

afterEach(() => setKvSink(undefined));

describe('MULTI … EXEC (node-redis v4.7/v5 shapes)', () => {
  it('queues the commands with the direct calls\' arguments and runs them as one store command, answering the replies in order', async () => {
    const { redis, store, sent } = wired();
    const m = redis.multi() as Loose;
    expect(m.set('idem:k', 'v', { NX: true })).toBe(m); // chainable
    const replies = await (m.incr('seq') as Loose).set('o', 'x', { condition: 'NX', expiration: { type: 'PX', value: 5_000 } }).get('o').pTTL('o').ttl('o').exec();
    expect(replies).toEqual(['OK', 1, 'OK', 'x', 5_000, 5]);
    // One store step: nothing of another request can run between them.
    expect(sent).toEqual(['exec']);
    expect(store.get('idem:k', 0)).toBe('v');
    // A second claim in a transaction answers null in its slot, and the rest still runs (no rollback, as Redis).
    expect(await ((redis.MULTI() as Loose).SET('idem:k', 'w', { NX: true }) as Loose).INCR('seq').EXEC()).toEqual([null, 2]);
    // An empty transaction answers [] (EXEC of nothing).
    expect(await (redis.multi() as Loose).exec()).toEqual([]);
  });

  it('the trace says what the transaction ran and each reply (display only)', async () => {
    let seen: { c: KvCommand; value: unknown } | undefined;
    const db = new Database(':memory:');
    setupKv(db);
    const store = new KvStore(db);
    setKvSink({ submit: async (c) => (seen = { c, value: c.run(store, 0) }).value });
    const redis = kvClient() as unknown as Loose;
    await (redis.multi().set('idem:k', 'v', { NX: true, PX: 30_000 }) as Loose).incr('seq').exec();
    expect(kvTraceWords(seen!.c, { value: seen!.value })).toEqual({ call: 'idem:k seq (SET idem:k "v" NX PX 30000; INCR seq)', answer: '[OK, 1]' });
  });

  it('a command that fails in its slot rejects exec with MultiErrorReply (the others ran), as node-redis does', async () => {
    const { redis, store } = wired();
    await redis.set('n', 'not a number');
    const err = await ((redis.multi() as Loose).incr('n') as Loose).set('after', '1').exec().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(MultiErrorReply);
    const m = err as MultiErrorReply;
    expect(m.message).toBe('1 commands failed, see .replies and .errorIndexes for more information');
    expect(m.errorIndexes).toEqual([0]);
    expect((m.replies[0] as Error).message).toBe('ERR value is not an integer or out of range');
    expect(m.replies[1]).toBe('OK');
    expect(store.get('after', 0)).toBe('1');
  });

  it('names a command the store lacks inside a MULTI, ioredis\'s array form, and exec-as-pipeline; a closed client refuses exec', async () => {
    const { redis, unsupported } = wired();
    expect(() => (redis.multi() as Loose).lPush('l', 'v')).toThrow(/redis\.multi\(\)\.lPush\(\), which the simulated store does not have/);
    expect(() => redis.multi([['set', 'k', 'v']])).toThrow(/ioredis's array of commands/);
    expect(() => ((redis.multi() as Loose).set('k', 'v') as Loose).exec(true)).toThrow(/exec\(true\)/);
    expect(unsupported).toHaveLength(3);
    // A value node-redis cannot send fails the transaction, and nothing of it is written.
    await expect(((redis.multi() as Loose).set('a', '1') as Loose).set('b', undefined).exec()).rejects.toThrow(/^Invalid argument type/);
    await redis.quit();
    await expect(((redis.multi() as Loose).set('a', '1') as Loose).exec()).rejects.toBeInstanceOf(ClientClosedError);
  });
});

describe('WATCH', () => {
  it('EXEC fails with WatchError, writing nothing, when another client wrote a watched key after WATCH (even the same value)', async () => {
    const { redis, other, store, sent } = wired();
    await redis.set('k', 'v');
    expect(await redis.watch('k')).toBe('OK');
    await other.set('k', 'v'); // the same value: Redis marks the key dirty all the same
    const err = await ((redis.multi() as Loose).set('k', 'mine') as Loose).set('order', '1').exec().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(WatchError);
    expect((err as Error).message).toBe('One (or more) of the watched keys has been changed');
    expect(store.get('order', 0)).toBeNull();
    expect(sent).toEqual(['set', 'watch', 'set', 'exec']);
    // EXEC unwatched the key: the next transaction runs.
    await other.set('k', 'again');
    expect(await ((redis.multi() as Loose).set('order', '2') as Loose).exec()).toEqual(['OK']);
  });

  it('EXEC runs when nobody wrote the watched keys; the client\'s own writes before MULTI count, as in Redis; UNWATCH forgets them', async () => {
    const { redis, other } = wired();
    await redis.WATCH(['a', 'b']);
    await other.get('a'); // a read is no write
    expect(await ((redis.multi() as Loose).incr('a') as Loose).exec()).toEqual([1]);
    await redis.watch('a');
    await redis.set('a', 'x'); // its own write
    await expect(((redis.multi() as Loose).get('a') as Loose).exec()).rejects.toBeInstanceOf(WatchError);
    await redis.watch('a');
    await other.del('a');
    expect(await redis.unwatch()).toBe('OK');
    expect(await ((redis.multi() as Loose).get('a') as Loose).exec()).toEqual([null]);
  });

  it('a watched key that expires before EXEC aborts it (Redis 6.0.9+)', async () => {
    const db = new Database(':memory:');
    setupKv(db);
    const store = new KvStore(db);
    let now = 0;
    setKvSink({ submit: async (c) => c.run(store, now) });
    const redis = kvClient() as unknown as Loose;
    await redis.set('lease', 'me', { PX: 100 });
    await redis.watch('lease');
    now = 200;
    await expect(((redis.multi() as Loose).set('order', '1') as Loose).exec()).rejects.toBeInstanceOf(WatchError);
  });

  it('is per connection: another client\'s WATCH is not this one\'s; duplicate() is a new connection that needs connect()', async () => {
    const { redis, other } = wired();
    await other.watch('k');
    await redis.set('k', '1');
    // redis watched nothing: its transaction runs.
    expect(await ((redis.multi() as Loose).get('k') as Loose).exec()).toEqual(['1']);
    await expect(((other.multi() as Loose).get('k') as Loose).exec()).rejects.toBeInstanceOf(WatchError);
    const dup = redis.duplicate() as Loose;
    expect(dup.isOpen).toBe(false);
    await expect(dup.get('k')).rejects.toBeInstanceOf(ClientClosedError);
    await dup.connect();
    expect(await dup.get('k')).toBe('1');
  });

  it('one client is one connection: two requests sharing it share its watched keys, and the first EXEC unwatches them for both (as on a real shared connection)', async () => {
    const { redis, other } = wired();
    await redis.watch('a'); // request A
    await redis.watch('b'); // request B, same client
    expect(await (redis.multi().set('b', 'B') as Loose).exec()).toEqual(['OK']); // B's EXEC checked a and b, and unwatched both
    await other.set('a', 'changed'); // would have aborted A's transaction on a connection of its own
    expect(await (redis.multi().set('order', 'A') as Loose).exec()).toEqual(['OK']);
  });

  it('a lost answer drops the connection: the server forgets the watched keys and the next EXEC fails with v5\'s "Client reconnected after WATCH", unsent', async () => {
    let loseNext = false;
    const { redis, sent, store } = wired(() => {
      const l = loseNext;
      loseNext = false;
      return l;
    });
    await redis.watch('k');
    loseNext = true;
    await expect(redis.get('k')).rejects.toThrow(/Socket closed/);
    await expect(((redis.multi() as Loose).set('order', '1') as Loose).exec()).rejects.toThrow(new WatchError('Client reconnected after WATCH'));
    expect(sent).toEqual(['watch', 'get']);
    expect(store.get('order', 0)).toBeNull();
    // The client's watch state was reset with it: the next transaction runs.
    expect(await ((redis.multi() as Loose).set('order', '1') as Loose).exec()).toEqual(['OK']);
  });
});
