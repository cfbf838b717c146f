import type { ExpireMode, KvStore, SetOptions } from './store.js';
import { storeSetOptions, type NodeRedisSetOptions } from './set-options.js';

/**
 * One command on its way to the store: its name (the interleaving point's
 * label is `kv.<name>`), the keys it touches (its footprint) and what it
 * does once the scheduler lets it run.
 */
export interface KvCommand {
  name: KvCommandName;
  keys: readonly string[];
  /** Whether it may write (a read-only command commutes with other reads of its keys). */
  write: boolean;
  run(store: KvStore, nowMs: number): unknown;
}

/** Every command the client sends, in the order the host declares them as steps. */
export const KV_COMMANDS = ['set', 'get', 'del', 'incr', 'pexpire', 'pttl', 'putIf'] as const;
export type KvCommandName = (typeof KV_COMMANDS)[number];

/** Where commands go: the request the host is running now. */
export interface KvSink {
  submit(c: KvCommand): Promise<unknown>;
  /** The app called a node-redis method the simulated store does not have (see {@link KvClient}). */
  unsupported?(method: string): void;
}

/** What the simulated store's client has, for the message that names a command it lacks. */
export const KV_CLIENT_METHODS = 'get, set (NX, XX, PX, EX, KEEPTTL, GET; v5\'s condition and expiration), del, incr, expire, pExpire, ttl, pTTL and putIf';

/**
 * node-redis (v4/v5) commands and client methods the simulated store does
 * not have, lower-cased (node-redis answers to `exists` and `EXISTS`).
 * Calling one is named as such: left to a TypeError, a framework turns it
 * into a 500, nothing is ever written, and a campaign that sees only 500s
 * finds no duplicate — a "holds" about code that never ran. A name not
 * listed stays undefined, so feature detection (`client.isOpen`) reads
 * what it read before.
 */
const NOT_SIMULATED = new Set([
  'append', 'bitcount', 'blpop', 'brpop', 'connect', 'copy', 'dbsize', 'decr', 'decrby', 'disconnect', 'duplicate', 'eval', 'evalsha',
  'exec', 'executeisolated', 'exists', 'expireat', 'flushall', 'flushdb', 'getdel', 'getex', 'getrange', 'getset', 'hdel', 'hexists',
  'hget', 'hgetall', 'hincrby', 'hkeys', 'hlen', 'hmget', 'hset', 'hsetnx', 'hvals', 'incrby', 'incrbyfloat', 'keys', 'lindex', 'llen',
  'lpop', 'lpush', 'lrange', 'lrem', 'ltrim', 'mget', 'mset', 'msetnx', 'multi', 'off', 'on', 'once', 'persist', 'pexpireat', 'ping',
  'psetex', 'publish', 'quit', 'rename', 'rpop', 'rpush', 'sadd', 'scan', 'scard', 'sendcommand', 'setex', 'setnx', 'setrange',
  'sismember', 'smembers', 'srem', 'strlen', 'subscribe', 'unlink', 'unwatch', 'watch', 'zadd', 'zcard', 'zrange', 'zrangebyscore',
  'zrem', 'zscore',
]);

/** node-redis's upper-case command names of the methods the store has (`SET` is `set`, `PEXPIRE` is `pExpire`). */
const RAW_NAMES: Readonly<Record<string, keyof KvClient>> = { GET: 'get', SET: 'set', DEL: 'del', INCR: 'incr', EXPIRE: 'expire', PEXPIRE: 'pExpire', TTL: 'ttl', PTTL: 'pTTL' };

/** The line that names a node-redis method the simulated store lacks. */
export function unsupportedText(method: string): string {
  // A method name, or a call with the option the store lacks (`set(…, { PXAT })`).
  return `the app called redis.${method.includes('(') ? method : `${method}()`}, which the simulated store does not have; it has ${KV_CLIENT_METHODS}: write it with those`;
}

/** Thrown into the app by a method the simulated store does not have; the host also reports it (exit 2) whatever the app does with it. */
export class KvUnsupportedCommand extends Error {
  constructor(readonly method: string) {
    super(`retrysim kv: ${unsupportedText(method)}`);
    this.name = 'KvUnsupportedCommand';
  }
}

let sink: KvSink | undefined;

/**
 * The canary store: `SET ... NX` done as a GET and then a plain SET, two
 * commands with an interleaving point between them (the check-then-insert a
 * store without an atomic NX forces). A correct app must go red on it.
 */
let nxAsGetThenSet = false;

/** @internal Plants (or removes) the canary store's non-atomic NX (tests only). */
export function plantNxAsGetThenSet(on: boolean): void {
  nxAsGetThenSet = on;
}

/** @internal The app host points the client at the request it is running (undefined between requests). */
export function setKvSink(s: KvSink | undefined): void {
  sink = s;
}

function send<T>(c: KvCommand): Promise<T> {
  if (sink === undefined) {
    return Promise.reject(new Error(`retrysim kv: ${c.name.toUpperCase()} ${c.keys.join(' ')} was sent outside a request (at import time or from a background timer); the simulated store answers requests only`));
  }
  return sink.submit(c) as Promise<T>;
}

function keyOf(k: unknown, cmd: string): string {
  if (typeof k !== 'string' || k === '') throw new TypeError(`retrysim kv: ${cmd} needs a non-empty string key, got ${JSON.stringify(k)}`);
  return k;
}

/**
 * A client of the simulated key-value store with the method names and
 * answers of `@redis/client` (node-redis v4/v5): what production
 * idempotency stores are written against, so a library's Redis adapter (or
 * Powertools' `CachePersistenceLayer`, which takes such a client) runs on it
 * unchanged. Every command is an interleaving point of the calling request:
 * other requests may run before it reaches the store, the slow and pause
 * faults may delay it, and its answer may be lost after it ran.
 *
 * @example
 * import { kvClient } from 'retrysim';
 * const redis = kvClient();
 * await redis.set('idem:' + key, 'IN_PROGRESS', { NX: true, PX: 30_000 }); // 'OK' or null
 */
export class KvClient {
  constructor() {
    // A known node-redis method this client lacks is a function that says so (see NOT_SIMULATED), not undefined.
    return new Proxy(this, {
      get(target, prop, receiver) {
        // node-redis answers to the raw command names too (`client.SET(...)`, as its README shows):
        // without them an app written so answered 500 to everything and read "inconclusive".
        if (typeof prop === 'string' && RAW_NAMES[prop] !== undefined) return Reflect.get(target, RAW_NAMES[prop], receiver) as unknown;
        if (typeof prop === 'string' && !(prop in target) && NOT_SIMULATED.has(prop.toLowerCase())) {
          return () => {
            sink?.unsupported?.(prop);
            throw new KvUnsupportedCommand(prop);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
  }

  get(key: string): Promise<string | null> {
    const k = keyOf(key, 'GET');
    return send({ name: 'get', keys: [k], write: false, run: (s, now) => s.get(k, now) });
  }

  /**
   * SET key value [NX|XX] [PX ms|EX s] [KEEPTTL] [GET]: 'OK', or null when NX/XX refused it.
   * Options as node-redis v4 (`{ NX: true, PX: 30_000 }`) or v5 (`{ condition: 'NX', expiration: { type: 'PX', value: 30_000 } }`) spells them.
   */
  set(key: string, value: string | number, nodeRedisOptions: NodeRedisSetOptions = {}): Promise<string | null> {
    const k = keyOf(key, 'SET');
    // node-redis sends strings, numbers and Buffers and refuses the rest (`JSON.stringify(undefined)` is undefined);
    // String() stored "undefined" or "[object Object]", and the app's bug held here.
    if (typeof value !== 'string' && typeof value !== 'number' && !Buffer.isBuffer(value)) {
      return Promise.reject(new TypeError(`Invalid argument type (the value of SET ${k} is ${value === null ? 'null' : typeof value}; node-redis sends strings, numbers and Buffers)`));
    }
    const v = String(value);
    // ioredis spells options as arguments (`set(k, v, 'PX', 30000, 'NX')`): read as node-redis's object they
    // were nothing, and a claim was a plain overwrite. Named instead, as a method the store lacks is.
    const options = nodeRedisOptions === null || (typeof nodeRedisOptions === 'object' && !Array.isArray(nodeRedisOptions))
      ? storeSetOptions(nodeRedisOptions ?? {})
      : { unsupported: `set(key, value, ${JSON.stringify(nodeRedisOptions)}, …) with ioredis's positional options (node-redis takes one object: set(key, value, { NX: true, PX: 30000 }))` };
    if ('unsupported' in options) {
      sink?.unsupported?.(options.unsupported);
      throw new KvUnsupportedCommand(options.unsupported);
    }
    if (options.NX && nxAsGetThenSet) return this.getThenSet(k, v, options);
    return send({ name: 'set', keys: [k], write: true, run: (s, now) => s.set(k, v, options, now) });
  }

  private async getThenSet(k: string, v: string, options: SetOptions): Promise<string | null> {
    if ((await this.get(k)) !== null) return null;
    return send({ name: 'set', keys: [k], write: true, run: (s, now) => s.set(k, v, { ...options, NX: false }, now) });
  }

  /** DEL key [key ...]: how many existed. */
  del(keys: string | readonly string[]): Promise<number> {
    const ks = (typeof keys === 'string' ? [keys] : [...keys]).map((k) => keyOf(k, 'DEL'));
    return send({ name: 'del', keys: ks, write: true, run: (s, now) => s.del(ks, now) });
  }

  incr(key: string): Promise<number> {
    const k = keyOf(key, 'INCR');
    return send({ name: 'incr', keys: [k], write: true, run: (s, now) => s.incr(k, now) });
  }

  /** EXPIRE key seconds [NX|XX|GT|LT]: 1 when the key exists and the mode let it set the expiry. */
  expire(key: string, seconds: number, mode?: ExpireMode): Promise<number> {
    const k = keyOf(key, 'EXPIRE');
    // Redis refuses fractional seconds; checked here, where seconds are still seconds (1.5 s is 1500 whole ms).
    return send({ name: 'pexpire', keys: [k], write: true, run: (s, now) => s.pexpire(k, Number.isInteger(seconds) ? seconds * 1000 : Number.NaN, now, mode) });
  }

  /** PEXPIRE key ms [NX|XX|GT|LT]: 1 when the key exists and the mode let it set the expiry. */
  pExpire(key: string, ms: number, mode?: ExpireMode): Promise<number> {
    const k = keyOf(key, 'PEXPIRE');
    // The mode (node-redis's third argument) was ignored until 2026-12: `expire(k, 30, 'NX')` overwrote an expiry it must keep.
    return send({ name: 'pexpire', keys: [k], write: true, run: (s, now) => s.pexpire(k, ms, now, mode) });
  }

  /** TTL key: seconds left, -1 without expiry, -2 when missing. */
  async ttl(key: string): Promise<number> {
    const ms = await this.pTTL(key);
    return ms < 0 ? ms : Math.round(ms / 1000);
  }

  /** PTTL key: ms left, -1 without expiry, -2 when missing. */
  pTTL(key: string): Promise<number> {
    const k = keyOf(key, 'PTTL');
    return send({ name: 'pttl', keys: [k], write: false, run: (s, now) => s.pttl(k, now) });
  }

  /**
   * A DynamoDB-style conditional put (`PutItem` with a `ConditionExpression`):
   * writes when `condition(current)` holds, atomically; resolves false where
   * DynamoDB throws `ConditionalCheckFailedException`.
   */
  putIf(key: string, value: string, condition: (current: string | undefined) => boolean, options: { ttlMs?: number } = {}): Promise<boolean> {
    const k = keyOf(key, 'PUT');
    return send({ name: 'putIf', keys: [k], write: true, run: (s, now) => s.putIf(k, value, condition, options.ttlMs, now) });
  }
}

/** A client of the simulated store (one per app instance, or one shared: they all reach the same store). */
export function kvClient(): KvClient {
  return new KvClient();
}
