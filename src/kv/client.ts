import { EventEmitter } from 'node:events';
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
  /** Its arguments after the keys, as the trace shows them (`"IN_PROGRESS" NX PX 30000`); display only. */
  args?: string;
  run(store: KvStore, nowMs: number): unknown;
}

/** Longest value the trace shows in full; a longer one is cut, with `…` (a stored answer can be a whole response). */
const SHOWN_CHARS_MAX = 40;

/** A value as the trace shows it: quoted, cut past {@link SHOWN_CHARS_MAX} characters. */
function shown(v: string): string {
  return `"${v.length > SHOWN_CHARS_MAX ? `${v.slice(0, SHOWN_CHARS_MAX)}…` : v}"`;
}

/** SET's options as redis-cli spells them: `NX PX 30000`. */
function setArgs(o: SetOptions): string {
  return [o.NX ? 'NX' : o.XX ? 'XX' : '', o.PX !== undefined ? `PX ${o.PX}` : o.EX !== undefined ? `EX ${o.EX}` : o.KEEPTTL ? 'KEEPTTL' : '', o.GET ? 'GET' : ''].filter((x) => x !== '').join(' ');
}

/**
 * What the trace adds to a store command's line once it ran: its keys and
 * arguments (`call`: `order:k1 "IN_PROGRESS" NX PX 30000`) and its answer
 * (`OK`, `null`, or the error it threw) — the `kv.set` line alone said
 * which command, not on what or with which outcome. Display only: the
 * hashed entry is the command's name, as it always was.
 */
export function kvTraceWords(c: KvCommand, outcome: { value: unknown } | { error: unknown }): { call: string; answer: string } {
  const answer = 'error' in outcome
    ? `error: ${outcome.error instanceof Error ? outcome.error.message : String(outcome.error)}`
    : outcome.value === null || outcome.value === undefined ? 'null'
      // SET's 'OK' is a status reply (redis-cli prints it bare); a stored value is a string, shown quoted.
      : typeof outcome.value === 'string' ? (c.name === 'set' && outcome.value === 'OK' ? 'OK' : shown(outcome.value))
        : String(outcome.value);
  return { call: `${c.keys.join(' ')}${c.args ? ` ${c.args}` : ''}`, answer };
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
export const KV_CLIENT_METHODS = 'get, set (NX, XX, PX, EX, KEEPTTL, GET; v5\'s condition and expiration), del, incr, expire, pExpire, ttl, pTTL, putIf and ping, and the connection\'s isOpen, isReady, connect, on/once/off, quit, close, disconnect and destroy';

/**
 * node-redis (v4/v5) commands and client methods the simulated store does
 * not have, lower-cased (node-redis answers to `exists` and `EXISTS`).
 * Calling one is named as such: left to a TypeError, a framework turns it
 * into a 500, nothing is ever written, and a campaign that sees only 500s
 * finds no duplicate — a "holds" about code that never ran. A name not
 * listed stays undefined, so feature detection (`'then' in client`) reads
 * what it reads on node-redis. The connection's methods (connect, on,
 * ping, quit, …) are no longer listed: the client has them (see
 * {@link KvClient.connect}).
 */
const NOT_SIMULATED = new Set([
  'append', 'bitcount', 'blpop', 'brpop', 'copy', 'dbsize', 'decr', 'decrby', 'duplicate', 'eval', 'evalsha',
  'exec', 'executeisolated', 'exists', 'expireat', 'flushall', 'flushdb', 'getdel', 'getex', 'getrange', 'getset', 'hdel', 'hexists',
  'hget', 'hgetall', 'hincrby', 'hkeys', 'hlen', 'hmget', 'hset', 'hsetnx', 'hvals', 'incrby', 'incrbyfloat', 'keys', 'lindex', 'llen',
  'lpop', 'lpush', 'lrange', 'lrem', 'ltrim', 'mget', 'mset', 'msetnx', 'multi', 'persist', 'pexpireat',
  'psetex', 'publish', 'rename', 'rpop', 'rpush', 'sadd', 'scan', 'scard', 'sendcommand', 'setex', 'setnx', 'setrange',
  'sismember', 'smembers', 'srem', 'strlen', 'subscribe', 'unlink', 'unwatch', 'watch', 'zadd', 'zcard', 'zrange', 'zrangebyscore',
  'zrem', 'zscore',
]);

/** node-redis's upper-case command names of the methods the store has (`SET` is `set`, `PEXPIRE` is `pExpire`). */
const RAW_NAMES: Readonly<Record<string, keyof KvClient>> = { GET: 'get', SET: 'set', DEL: 'del', INCR: 'incr', EXPIRE: 'expire', PEXPIRE: 'pExpire', TTL: 'ttl', PTTL: 'pTTL', PING: 'ping', QUIT: 'quit' };

/**
 * node-redis's answer to a command (or quit/close/destroy) on a client that
 * was closed: same name and message as `@redis/client`'s errors.ts (v4.7.1
 * and v5.12.1 alike), so an app that tells it apart by either reads it.
 */
export class ClientClosedError extends Error {
  constructor() {
    super('The client is closed');
    this.name = 'ClientClosedError';
  }
}

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
 * The clients whose app closed them (quit/close/disconnect/destroy). The
 * host hands `app({ redis })` a client per process that is already
 * connected (as a production factory's is once its `await client.connect()`
 * returned), and a killed process's successor gets a fresh one, so a
 * client is open while its process lives unless the app closed it. Kept
 * here rather than in a `#field`: the client is a Proxy, and a private
 * field read through one throws.
 */
const closed = new WeakSet<object>();

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
export class KvClient extends EventEmitter {
  constructor() {
    super();
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

  /** node-redis's `isOpen`: true from connect() until quit/close/disconnect/destroy. */
  get isOpen(): boolean {
    return !closed.has(this);
  }

  /**
   * node-redis's `isReady`: the socket is connected and the handshake done.
   * The simulated connection never drops (see {@link connect}), so it is
   * ready exactly while open.
   */
  get isReady(): boolean {
    return !closed.has(this);
  }

  /**
   * node-redis's `connect()`. On an open client it rejects with
   * `Socket already opened`, as `RedisSocket.connect` does in both
   * `@redis/client` v4.7.1 and v5.12.1 (packages/client/lib/client/socket.ts:
   * `if (this.#isOpen) throw new Error('Socket already opened')`): the usual
   * guard `if (!redis.isOpen) await redis.connect()` passes, and an app whose
   * factory connects the client it was handed unguarded fails as it would in
   * production. On a closed client it opens it again and resolves with the
   * client, as node-redis does.
   *
   * Events: the client is node-redis's EventEmitter, so `on`/`once`/`off`
   * ('error', 'connect', 'ready', 'end', 'reconnecting', …) register and
   * return the client, but the simulation never emits a connection event:
   * its faults are a command's answer lost after the store ran it (the
   * caller's promise rejects), not a socket that errors and reconnects, so
   * there is nothing an 'error' listener would be told. Only an app's own
   * quit/close/disconnect/destroy emits 'end', as node-redis does.
   */
  connect(): Promise<this> {
    if (!closed.has(this)) {
      return Promise.reject(new Error('Socket already opened (retrysim: app({ redis }) hands the app a connected client; guard with if (!redis.isOpen) await redis.connect())'));
    }
    closed.delete(this);
    this.emit('connect');
    this.emit('ready');
    return Promise.resolve(this);
  }

  /**
   * PING [message]: 'PONG', or the message. Not an interleaving point: it
   * touches no key, so no other request's command can change its answer
   * and its position among theirs changes nothing a claim depends on; a
   * step for it would only add schedules that are the same.
   */
  ping(message?: string): Promise<string> {
    if (closed.has(this)) return Promise.reject(new ClientClosedError());
    return Promise.resolve(message ? message : 'PONG');
  }

  /**
   * QUIT (node-redis v4; deprecated in v5 for close()): 'OK', then the
   * client is closed for every request of this process (they share it, as
   * a production app's requests share its one client): commands reject
   * with ClientClosedError, as node-redis's do, until connect() again.
   * Not a store command either: it changes no key.
   */
  quit(): Promise<string> {
    if (closed.has(this)) return Promise.reject(new ClientClosedError());
    this.shut();
    return Promise.resolve('OK');
  }

  /** v5's close(): new commands are refused at once; one already sent (by another request of the process) still gets its answer, as node-redis waits for pending commands. */
  close(): Promise<void> {
    if (closed.has(this)) return Promise.reject(new ClientClosedError());
    this.shut();
    return Promise.resolve();
  }

  /**
   * v4's disconnect() (v5: destroy() wrapped in a promise): closed at once.
   * node-redis also fails the commands already sent with
   * DisconnectsClientError; here one another request already sent still
   * runs (it sits in that request's queue, past this client). On a closed
   * client v5 throws ClientClosedError synchronously — here a rejection,
   * as v4's async method gives.
   */
  disconnect(): Promise<void> {
    if (closed.has(this)) return Promise.reject(new ClientClosedError());
    this.shut();
    return Promise.resolve();
  }

  /** v5's destroy(): closed at once; throws ClientClosedError on a closed client (synchronously, as node-redis). */
  destroy(): void {
    if (closed.has(this)) throw new ClientClosedError();
    this.shut();
  }

  private shut(): void {
    closed.add(this);
    this.emit('end');
  }

  /** Every command goes through here: a closed client refuses it, as node-redis does, before it reaches the store. */
  private sendOpen<T>(c: KvCommand): Promise<T> {
    if (closed.has(this)) return Promise.reject(new ClientClosedError());
    return send<T>(c);
  }

  get(key: string): Promise<string | null> {
    const k = keyOf(key, 'GET');
    return this.sendOpen({ name: 'get', keys: [k], write: false, run: (s, now) => s.get(k, now) });
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
    return this.sendOpen({ name: 'set', keys: [k], write: true, args: [shown(v), setArgs(options)].filter((x) => x !== '').join(' '), run: (s, now) => s.set(k, v, options, now) });
  }

  private async getThenSet(k: string, v: string, options: SetOptions): Promise<string | null> {
    if ((await this.get(k)) !== null) return null;
    const plain = { ...options, NX: false };
    return this.sendOpen({ name: 'set', keys: [k], write: true, args: [shown(v), setArgs(plain)].filter((x) => x !== '').join(' '), run: (s, now) => s.set(k, v, plain, now) });
  }

  /** DEL key [key ...]: how many existed. */
  del(keys: string | readonly string[]): Promise<number> {
    const ks = (typeof keys === 'string' ? [keys] : [...keys]).map((k) => keyOf(k, 'DEL'));
    return this.sendOpen({ name: 'del', keys: ks, write: true, run: (s, now) => s.del(ks, now) });
  }

  incr(key: string): Promise<number> {
    const k = keyOf(key, 'INCR');
    return this.sendOpen({ name: 'incr', keys: [k], write: true, run: (s, now) => s.incr(k, now) });
  }

  /** EXPIRE key seconds [NX|XX|GT|LT]: 1 when the key exists and the mode let it set the expiry. */
  expire(key: string, seconds: number, mode?: ExpireMode): Promise<number> {
    const k = keyOf(key, 'EXPIRE');
    // Redis refuses fractional seconds; checked here, where seconds are still seconds (1.5 s is 1500 whole ms).
    const ms = Number.isInteger(seconds) ? seconds * 1000 : Number.NaN;
    return this.sendOpen({ name: 'pexpire', keys: [k], write: true, args: `${ms}${mode ? ` ${mode}` : ''}`, run: (s, now) => s.pexpire(k, ms, now, mode) });
  }

  /** PEXPIRE key ms [NX|XX|GT|LT]: 1 when the key exists and the mode let it set the expiry. */
  pExpire(key: string, ms: number, mode?: ExpireMode): Promise<number> {
    const k = keyOf(key, 'PEXPIRE');
    // The mode (node-redis's third argument) was ignored until 2026-12: `expire(k, 30, 'NX')` overwrote an expiry it must keep.
    return this.sendOpen({ name: 'pexpire', keys: [k], write: true, args: `${ms}${mode ? ` ${mode}` : ''}`, run: (s, now) => s.pexpire(k, ms, now, mode) });
  }

  /** TTL key: seconds left, -1 without expiry, -2 when missing. */
  async ttl(key: string): Promise<number> {
    const ms = await this.pTTL(key);
    return ms < 0 ? ms : Math.round(ms / 1000);
  }

  /** PTTL key: ms left, -1 without expiry, -2 when missing. */
  pTTL(key: string): Promise<number> {
    const k = keyOf(key, 'PTTL');
    return this.sendOpen({ name: 'pttl', keys: [k], write: false, run: (s, now) => s.pttl(k, now) });
  }

  /**
   * A DynamoDB-style conditional put (`PutItem` with a `ConditionExpression`):
   * writes when `condition(current)` holds, atomically; resolves false where
   * DynamoDB throws `ConditionalCheckFailedException`.
   */
  putIf(key: string, value: string, condition: (current: string | undefined) => boolean, options: { ttlMs?: number } = {}): Promise<boolean> {
    const k = keyOf(key, 'PUT');
    return this.sendOpen({ name: 'putIf', keys: [k], write: true, args: `${shown(String(value))}${options.ttlMs !== undefined ? ` PX ${options.ttlMs}` : ''}`, run: (s, now) => s.putIf(k, value, condition, options.ttlMs, now) });
  }
}

/** A client of the simulated store (one per app instance, or one shared: they all reach the same store). */
export function kvClient(): KvClient {
  return new KvClient();
}
