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
  /**
   * The command as the app sent it, when it is not the step's own name: EXISTS
   * reads keys as GET does (`kv.get`), SETEX is SET with EX (`kv.set`), GETDEL
   * deletes (`kv.del`), INCRBY/DECR/DECRBY count (`kv.incr`). Shown first in
   * the trace's call (`EXISTS idem:k`); display only — the step, its faults
   * and its coverage row are the named one's, so adding such a command left
   * every app's declared steps, and the scenarios generated from them, as
   * they were.
   */
  verb?: string;
  /** Its arguments after the keys, as the trace shows them (`"IN_PROGRESS" NX PX 30000`); display only. */
  args?: string;
  /** EXEC: the names of the commands it runs, in order (how the trace reads their replies); display only. */
  queued?: readonly string[];
  run(store: KvStore, nowMs: number): unknown;
  /**
   * The crash fault struck its answer: the connection dropped after the
   * store ran it. The client forgets what the server forgot with the
   * connection (its watched keys, see {@link KvClient.watch}).
   */
  lost?(): void;
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
  const reply = (name: string, v: unknown): string => v instanceof Error ? `error: ${v.message}`
    : v === null || v === undefined ? 'null'
      // SET's (and WATCH's) 'OK' is a status reply (redis-cli prints it bare); a stored value is a string, shown quoted.
      : typeof v === 'string' ? ((name === 'set' || name === 'watch') && v === 'OK' ? 'OK' : shown(v))
        // HGETALL's fields.
        : typeof v === 'object' ? shown(JSON.stringify(v))
          : String(v);
  // EXEC's answer is its commands' replies, in order.
  const answer = 'error' in outcome ? reply(c.name, outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error)))
    : Array.isArray(outcome.value) ? `[${outcome.value.map((v, i) => reply(c.queued?.[i] ?? '', v)).join(', ')}]`
      : reply(c.name, outcome.value);
  return { call: `${c.verb === undefined ? '' : `${c.verb} `}${c.keys.join(' ')}${c.args ? ` ${c.args}` : ''}`, answer };
}

/** Every command the client sends, in the order the host declares them as steps. */
export const KV_COMMANDS = ['set', 'get', 'del', 'incr', 'pexpire', 'pttl', 'putIf', 'exec', 'watch'] as const;
export type KvCommandName = (typeof KV_COMMANDS)[number];

/** Where commands go: the request the host is running now. */
export interface KvSink {
  submit(c: KvCommand): Promise<unknown>;
  /** The app called a node-redis method the simulated store does not have (see {@link KvClient}). */
  unsupported?(method: string): void;
}

/** What the simulated store's client has, for the message that names a command it lacks. */
export const KV_CLIENT_METHODS = 'get, set (NX, XX, PX, EX, KEEPTTL, GET; v5\'s condition and expiration), setEx, pSetEx, exists, del, getDel, incr, incrBy, decr, decrBy, hSet, hGet, hGetAll, hDel, hIncrBy, hLen, expire, pExpire, ttl, pTTL, putIf, ping, multi() with those commands and exec(), watch, unwatch and duplicate, and the connection\'s isOpen, isReady, connect, on/once/off, quit, close, disconnect and destroy';

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
  'append', 'bitcount', 'blpop', 'brpop', 'copy', 'dbsize', 'eval', 'evalsha',
  'executeisolated', 'expireat', 'flushall', 'flushdb', 'getex', 'getrange', 'getset', 'hexists',
  'hkeys', 'hmget', 'hsetnx', 'hvals', 'incrbyfloat', 'keys', 'lindex', 'llen',
  'lpop', 'lpush', 'lrange', 'lrem', 'ltrim', 'mget', 'mset', 'msetnx', 'persist', 'pexpireat',
  'publish', 'rename', 'rpop', 'rpush', 'sadd', 'scan', 'scard', 'sendcommand', 'setnx', 'setrange',
  'sismember', 'smembers', 'srem', 'strlen', 'subscribe', 'unlink', 'zadd', 'zcard', 'zrange', 'zrangebyscore',
  'zrem', 'zscore',
]);

/**
 * A name the client lacks in this spelling but has in node-redis's
 * (`setex` for `setEx`, ioredis's lower-case names): left undefined, the
 * app's call was a TypeError its framework turned into a 500. Named, with
 * the spelling node-redis has.
 */
function otherSpelling(target: object, prop: string): string | undefined {
  const lower = prop.toLowerCase();
  if (lower === prop.toUpperCase()) return undefined;
  let o: object | null = target;
  while (o !== null && o !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(o)) if (name !== prop && name.toLowerCase() === lower && name !== 'constructor' && typeof (target as Record<string, unknown>)[name] === 'function') return name;
    o = Object.getPrototypeOf(o) as object | null;
  }
  return undefined;
}

/**
 * What to name when an app calls `prop`, which the client (or a MULTI chain)
 * lacks: a node-redis command the store does not simulate, as `call` writes
 * it, or another spelling of one it has; undefined for any other name (left
 * undefined, as on node-redis, so feature detection reads the same).
 */
function missingMethod(target: object, prop: string, call: string): string | undefined {
  if (NOT_SIMULATED.has(prop.toLowerCase())) return call;
  const spelled = otherSpelling(target, prop);
  return spelled === undefined ? undefined : `${call.endsWith(')') ? call : `${call}()`} (node-redis spells it ${spelled}(); ioredis's lower-case names are not simulated)`;
}

/** The function a missing method is: it reports the call to the host (exit 2 whatever the app does with the error) and throws. */
function refusing(named: string): () => never {
  return () => {
    sink?.unsupported?.(named);
    throw new KvUnsupportedCommand(named);
  };
}

/** node-redis's upper-case command names of the methods the store has (`SET` is `set`, `PEXPIRE` is `pExpire`). */
const RAW_NAMES: Readonly<Record<string, keyof KvClient>> = { GET: 'get', SET: 'set', SETEX: 'setEx', PSETEX: 'pSetEx', EXISTS: 'exists', DEL: 'del', GETDEL: 'getDel', INCR: 'incr', INCRBY: 'incrBy', DECR: 'decr', DECRBY: 'decrBy', HSET: 'hSet', HGET: 'hGet', HGETALL: 'hGetAll', HDEL: 'hDel', HINCRBY: 'hIncrBy', HLEN: 'hLen', EXPIRE: 'expire', PEXPIRE: 'pExpire', TTL: 'ttl', PTTL: 'pTTL', PING: 'ping', QUIT: 'quit', MULTI: 'multi', WATCH: 'watch', UNWATCH: 'unwatch' };

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

/** The sink of the request whose code sends a command, when the host can tell (its async context) — else the turn's. */
let scopeSink: (() => KvSink | undefined) | undefined;

/** @internal The app host: which request's code runs now, by its async context (see serve-request.ts). */
export function setKvScopeSink(f: (() => KvSink | undefined) | undefined): void {
  scopeSink = f;
}

function send<T>(c: KvCommand): Promise<T> {
  const to = scopeSink?.() ?? sink;
  if (to === undefined) {
    return Promise.reject(new Error(`retrysim kv: ${c.name.toUpperCase()} ${c.keys.join(' ')} was sent outside a request (at import time or from a background timer); the simulated store answers requests only`));
  }
  return to.submit(c) as Promise<T>;
}

function keyOf(k: unknown, cmd: string): string {
  if (typeof k !== 'string' || k === '') throw new TypeError(`retrysim kv: ${cmd} needs a non-empty string key, got ${JSON.stringify(k)}`);
  return k;
}

/** GET as a store command. */
function getCommand(key: unknown): KvCommand {
  const k = keyOf(key, 'GET');
  return { name: 'get', keys: [k], write: false, run: (s, now) => s.get(k, now) };
}

/**
 * SET as a store command, or the TypeError node-redis gives a value it
 * cannot send; an option the store lacks is named (and thrown) here.
 */
function setCommand(key: unknown, value: unknown, nodeRedisOptions: unknown): { c: KvCommand; k: string; v: string; options: SetOptions } | { refused: TypeError } {
  const k = keyOf(key, 'SET');
  // node-redis sends strings, numbers and Buffers and refuses the rest (`JSON.stringify(undefined)` is undefined);
  // String() stored "undefined" or "[object Object]", and the app's bug held here.
  if (typeof value !== 'string' && typeof value !== 'number' && !Buffer.isBuffer(value)) {
    return { refused: new TypeError(`Invalid argument type (the value of SET ${k} is ${value === null ? 'null' : typeof value}; node-redis sends strings, numbers and Buffers)`) };
  }
  const v = String(value);
  // ioredis spells options as arguments (`set(k, v, 'PX', 30000, 'NX')`): read as node-redis's object they
  // were nothing, and a claim was a plain overwrite. Named instead, as a method the store lacks is.
  const options = nodeRedisOptions === undefined || nodeRedisOptions === null || (typeof nodeRedisOptions === 'object' && !Array.isArray(nodeRedisOptions))
    ? storeSetOptions((nodeRedisOptions ?? {}) as NodeRedisSetOptions)
    : { unsupported: `set(key, value, ${JSON.stringify(nodeRedisOptions)}, …) with ioredis's positional options (node-redis takes one object: set(key, value, { NX: true, PX: 30000 }))` };
  if ('unsupported' in options) {
    sink?.unsupported?.(options.unsupported);
    throw new KvUnsupportedCommand(options.unsupported);
  }
  return { c: { name: 'set', keys: [k], write: true, args: [shown(v), setArgs(options)].filter((x) => x !== '').join(' '), run: (s, now) => s.set(k, v, options, now) }, k, v, options };
}

function delCommand(keys: unknown): KvCommand {
  const ks = (typeof keys === 'string' ? [keys] : [...(keys as readonly unknown[])]).map((k) => keyOf(k, 'DEL'));
  return { name: 'del', keys: ks, write: true, run: (s, now) => s.del(ks, now) };
}

function incrCommand(key: unknown): KvCommand {
  const k = keyOf(key, 'INCR');
  return { name: 'incr', keys: [k], write: true, run: (s, now) => s.incr(k, now) };
}

/** A count as Redis parses one: a number, or a string of digits (node-redis sends both as text); anything else is not an integer. */
function integerArg(v: unknown): number {
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  return typeof n === 'number' && Number.isInteger(n) ? n : Number.NaN;
}

/** INCRBY, DECR and DECRBY: the `kv.incr` step, by another step (a non-integer one fails as Redis's does, in the store). */
function incrByCommand(key: unknown, by: unknown, verb: 'INCRBY' | 'DECR' | 'DECRBY'): KvCommand {
  const k = keyOf(key, verb);
  const n = verb === 'DECR' ? -1 : verb === 'DECRBY' ? -integerArg(by) : integerArg(by);
  return { name: 'incr', verb, keys: [k], write: true, ...(verb === 'DECR' ? {} : { args: String(by) }), run: (s, now) => s.incrBy(k, n, now) };
}

/** A field or value as node-redis sends it (strings, numbers, Buffers); anything else is its TypeError. */
function argText(v: unknown, what: string): string {
  if (typeof v !== 'string' && typeof v !== 'number' && !Buffer.isBuffer(v)) throw new TypeError(`Invalid argument type (${what} is ${v === null ? 'null' : typeof v}; node-redis sends strings, numbers and Buffers)`);
  return String(v);
}

/** HSET's field-value pairs from each form node-redis takes: (field, value), an object, a Map, [[f, v], …] or [f, v, f, v]. */
function hsetPairs(key: string, a: unknown, b: unknown): Array<[string, string]> {
  const what = (f: unknown) => `the value of HSET ${key} ${String(f)}`;
  if (typeof a === 'string' || typeof a === 'number' || Buffer.isBuffer(a)) return [[String(a), argText(b, what(a))]];
  if (a instanceof Map) return [...(a as Map<unknown, unknown>)].map(([f, v]) => [argText(f, `a field of HSET ${key}`), argText(v, what(f))]);
  if (Array.isArray(a)) {
    if (a.every((x) => Array.isArray(x))) return (a as unknown[][]).map(([f, v]) => [argText(f, `a field of HSET ${key}`), argText(v, what(f))]);
    if (a.length % 2 !== 0) throw new TypeError(`HSET ${key}: [field, value, …] needs pairs, got ${a.length} items`);
    const out: Array<[string, string]> = [];
    for (let i = 0; i < a.length; i += 2) out.push([argText(a[i], `a field of HSET ${key}`), argText(a[i + 1], what(a[i]))]);
    return out;
  }
  if (a !== null && typeof a === 'object') return Object.entries(a as Record<string, unknown>).map(([f, v]) => [f, argText(v, what(f))]);
  throw new TypeError(`HSET ${key}: expected (field, value), an object, a Map or an array of pairs, got ${a === undefined ? 'nothing' : typeof a}`);
}

/** HSET: the `kv.set` step; a value node-redis cannot send is refused before anything is sent. */
function hsetCommand(key: unknown, a: unknown, b: unknown): { c: KvCommand } | { refused: TypeError } {
  const k = keyOf(key, 'HSET');
  let pairs: Array<[string, string]>;
  try {
    pairs = hsetPairs(k, a, b);
  } catch (e) {
    return { refused: e as TypeError };
  }
  return { c: { name: 'set', verb: 'HSET', keys: [k], write: true, args: pairs.map(([f, v]) => `${f} ${shown(v)}`).join(' '), run: (s, now) => s.hset(k, pairs, now) } };
}

function hgetCommand(key: unknown, field: unknown): KvCommand {
  const k = keyOf(key, 'HGET');
  const f = String(field);
  return { name: 'get', verb: 'HGET', keys: [k], write: false, args: f, run: (s, now) => s.hget(k, f, now) };
}

function hgetallCommand(key: unknown): KvCommand {
  const k = keyOf(key, 'HGETALL');
  return { name: 'get', verb: 'HGETALL', keys: [k], write: false, run: (s, now) => s.hgetall(k, now) };
}

function hlenCommand(key: unknown): KvCommand {
  const k = keyOf(key, 'HLEN');
  return { name: 'get', verb: 'HLEN', keys: [k], write: false, run: (s, now) => s.hlen(k, now) };
}

function hdelCommand(key: unknown, fields: unknown[]): KvCommand {
  const k = keyOf(key, 'HDEL');
  const fs = fields.flat().map((f) => String(f));
  return { name: 'del', verb: 'HDEL', keys: [k], write: true, args: fs.join(' '), run: (s, now) => s.hdel(k, fs, now) };
}

function hincrbyCommand(key: unknown, field: unknown, by: unknown): KvCommand {
  const k = keyOf(key, 'HINCRBY');
  const f = String(field);
  const n = integerArg(by);
  return { name: 'incr', verb: 'HINCRBY', keys: [k], write: true, args: `${f} ${String(by)}`, run: (s, now) => s.hincrby(k, f, n, now) };
}

/** EXISTS key [key ...]: a read of its keys, the `kv.get` step. */
function existsCommand(keys: unknown): KvCommand {
  const ks = (typeof keys === 'string' ? [keys] : [...(keys as readonly unknown[])]).map((k) => keyOf(k, 'EXISTS'));
  return { name: 'get', verb: 'EXISTS', keys: ks, write: false, run: (s, now) => s.exists(ks, now) };
}

/** GETDEL key: the value, and the key deleted; the `kv.del` step. */
function getDelCommand(key: unknown): KvCommand {
  const k = keyOf(key, 'GETDEL');
  return { name: 'del', verb: 'GETDEL', keys: [k], write: true, run: (s, now) => s.getDel(k, now) };
}

/**
 * SETEX key seconds value and PSETEX key ms value: SET with EX or PX (the
 * `kv.set` step), refused as Redis refuses them — a count that is not an
 * integer, or not positive (`ERR invalid expire time in 'setex' command`).
 */
function setExCommand(key: unknown, amount: unknown, value: unknown, verb: 'SETEX' | 'PSETEX'): { c: KvCommand } | { refused: TypeError } {
  const r = setCommand(key, value, undefined);
  if ('refused' in r) return r;
  const n = integerArg(amount);
  const options: SetOptions = verb === 'SETEX' ? { EX: n } : { PX: n };
  return {
    c: {
      name: 'set', verb, keys: [r.k], write: true, args: `${String(amount)} ${shown(r.v)}`,
      run: (s, now) => {
        if (Number.isNaN(n)) throw new Error('ERR value is not an integer or out of range');
        if (n <= 0) throw new Error(`ERR invalid expire time in '${verb.toLowerCase()}' command`);
        return s.set(r.k, r.v, options, now);
      },
    },
  };
}

/** EXPIRE (seconds) and PEXPIRE (ms) are one store command. */
function pexpireCommand(key: unknown, amount: number, unit: 'EXPIRE' | 'PEXPIRE', mode?: ExpireMode): KvCommand {
  const k = keyOf(key, unit);
  // Redis refuses fractional seconds; checked here, where seconds are still seconds (1.5 s is 1500 whole ms).
  // The mode (node-redis's third argument) was ignored until 2026-12: `expire(k, 30, 'NX')` overwrote an expiry it must keep.
  const ms = unit === 'PEXPIRE' ? amount : Number.isInteger(amount) ? amount * 1000 : Number.NaN;
  return { name: 'pexpire', keys: [k], write: true, args: `${ms}${mode ? ` ${mode}` : ''}`, run: (s, now) => s.pexpire(k, ms, now, mode) };
}

function pttlCommand(key: unknown): KvCommand {
  const k = keyOf(key, 'PTTL');
  return { name: 'pttl', keys: [k], write: false, run: (s, now) => s.pttl(k, now) };
}

/** TTL's answer from PTTL's: seconds, the negative codes as they are. */
const ttlOfPttl = (ms: number): number => (ms < 0 ? ms : Math.round(ms / 1000));

/** What node-redis makes of EXEC's reply: null (aborted) is a WatchError, a slot's error a MultiErrorReply, else the replies. */
function execAnswer(replies: unknown[] | null): unknown[] {
  if (replies === null) throw new WatchError();
  const errorIndexes = replies.flatMap((r, i) => (r instanceof ErrorReply ? [i] : []));
  if (errorIndexes.length > 0) throw new MultiErrorReply(replies, errorIndexes);
  return replies;
}

/**
 * A command's error inside EXEC: Redis answers that slot with the error and
 * runs the others; node-redis puts an `ErrorReply` there (`@redis/client`
 * lib/errors.ts, v4.7.1 and v5.12.1: `class ErrorReply extends Error`, the
 * server's message as its own).
 */
export class ErrorReply extends Error {}

/**
 * What `exec()` rejects with when a slot holds an error: node-redis's
 * `MultiErrorReply` (lib/errors.ts; thrown by `transformReplies` in
 * lib/multi-command.ts of v4.7.1 and v5.12.1 alike), with every reply in
 * `.replies` (the errors in their slots) and `.errorIndexes`. The other
 * commands of the transaction ran: Redis does not roll back.
 */
export class MultiErrorReply extends ErrorReply {
  constructor(readonly replies: unknown[], readonly errorIndexes: number[]) {
    super(`${errorIndexes.length} commands failed, see .replies and .errorIndexes for more information`);
  }
}

/**
 * What `exec()` rejects with when the transaction was aborted (EXEC
 * answered null): node-redis's `WatchError` (lib/errors.ts, same message
 * in v4.7.1 and v5.12.1; v4's `handleExecReplies` in lib/multi-command.ts
 * and v5's `_executeMulti` in lib/client/index.ts throw it on a null EXEC
 * reply). v5 also throws it, with `Client reconnected after WATCH`, when the
 * connection dropped since WATCH, without sending the transaction.
 */
export class WatchError extends Error {
  constructor(message = 'One (or more) of the watched keys has been changed') {
    super(message);
  }
}

/**
 * WATCH's state of one client (one connection): the keys the server
 * watches for it, each with its write count when watched, and whether the
 * client knows it is watching (v5's `#watchEpoch`: set once a WATCH was
 * answered). Kept outside the client for the same reason as {@link closed}.
 */
interface WatchState {
  keys: Map<string, number>;
  known: boolean;
  /** v5's `#dirtyWatch`: the connection dropped while watching; the next EXEC fails with this. */
  dirty?: string;
}
const watching = new WeakMap<object, WatchState>();

function watchStateOf(client: object): WatchState {
  let w = watching.get(client);
  if (w === undefined) {
    w = { keys: new Map(), known: false };
    watching.set(client, w);
  }
  return w;
}

/**
 * The canary store's EXEC: each queued command sent as its own store step
 * (other requests' commands may run between them, a crash may strike
 * between them), as a client without transactions would. An app relying on
 * MULTI's atomicity must go red on it.
 */
let execNotAtomic = false;

/** @internal Plants (or removes) the canary store's non-atomic EXEC (tests only). */
export function plantExecNotAtomic(on: boolean): void {
  execNotAtomic = on;
}

/** One command queued in a MULTI: the store command, and how the method's answer is made from the raw reply. */
interface Queued {
  c: KvCommand;
  reply?: (raw: never) => unknown;
}

/**
 * node-redis's `client.multi()`: a chain of the store's commands (same
 * arguments as the client's methods, each returning the chain) that
 * `exec()` sends as MULTI … EXEC, and so the store runs as one step
 * (`kv.exec`): no other request's command runs between them. Only the
 * commands the store has are queued; another node-redis command is named
 * as the client names it.
 */
export class KvMulti {
  readonly #client: KvClient;
  readonly #queue: Queued[] = [];
  /** node-redis refuses a value it cannot encode when it sends the transaction: exec() rejects with it. */
  #refused: TypeError | undefined;

  constructor(client: KvClient) {
    this.#client = client;
    const self = this;
    const proxy: KvMulti = new Proxy(this, {
      get(target, key) {
        const raw = typeof key === 'string' ? MULTI_RAW_NAMES[key] : undefined;
        const prop = raw ?? key;
        if (typeof prop === 'string' && raw === undefined && !(prop in target)) {
          const named = missingMethod(target, prop, `multi().${prop}()`);
          if (named !== undefined) return refusing(named);
        }
        const v = Reflect.get(target, prop, target) as unknown;
        // Methods run on the target (its #fields), and answer the proxy for chaining.
        return typeof v === 'function' ? (...a: unknown[]) => {
          const r = (v as (...x: unknown[]) => unknown).apply(self, a);
          return r === self ? proxy : r;
        } : v;
      },
    });
    return proxy;
  }

  #add(c: KvCommand, reply?: (raw: never) => unknown): this {
    this.#queue.push(reply === undefined ? { c } : { c, reply });
    return this;
  }

  get(key: string): this {
    return this.#add(getCommand(key));
  }

  set(key: string, value: string | number, options: NodeRedisSetOptions = {}): this {
    return this.#addOrRefuse(setCommand(key, value, options));
  }

  del(keys: string | readonly string[]): this {
    return this.#add(delCommand(keys));
  }

  incr(key: string): this {
    return this.#add(incrCommand(key));
  }

  incrBy(key: string, increment: number): this {
    return this.#add(incrByCommand(key, increment, 'INCRBY'));
  }

  decr(key: string): this {
    return this.#add(incrByCommand(key, -1, 'DECR'));
  }

  decrBy(key: string, decrement: number): this {
    return this.#add(incrByCommand(key, decrement, 'DECRBY'));
  }

  exists(keys: string | readonly string[]): this {
    return this.#add(existsCommand(keys));
  }

  getDel(key: string): this {
    return this.#add(getDelCommand(key));
  }

  setEx(key: string, seconds: number, value: string | number): this {
    return this.#addOrRefuse(setExCommand(key, seconds, value, 'SETEX'));
  }

  pSetEx(key: string, ms: number, value: string | number): this {
    return this.#addOrRefuse(setExCommand(key, ms, value, 'PSETEX'));
  }

  hSet(key: string, a: unknown, b?: unknown): this {
    return this.#addOrRefuse(hsetCommand(key, a, b));
  }

  hGet(key: string, field: string): this {
    return this.#add(hgetCommand(key, field));
  }

  hGetAll(key: string): this {
    return this.#add(hgetallCommand(key));
  }

  hLen(key: string): this {
    return this.#add(hlenCommand(key));
  }

  hDel(key: string, ...fields: Array<string | readonly string[]>): this {
    return this.#add(hdelCommand(key, fields));
  }

  hIncrBy(key: string, field: string, increment: number): this {
    return this.#add(hincrbyCommand(key, field, increment));
  }

  /** A command node-redis can send is queued; one it cannot is kept for exec() to reject with, as node-redis encodes at exec. */
  #addOrRefuse(r: { c: KvCommand } | { refused: TypeError }): this {
    if ('refused' in r) {
      this.#refused ??= r.refused;
      return this;
    }
    return this.#add(r.c);
  }

  expire(key: string, seconds: number, mode?: ExpireMode): this {
    return this.#add(pexpireCommand(key, seconds, 'EXPIRE', mode));
  }

  pExpire(key: string, ms: number, mode?: ExpireMode): this {
    return this.#add(pexpireCommand(key, ms, 'PEXPIRE', mode));
  }

  ttl(key: string): this {
    return this.#add(pttlCommand(key), ttlOfPttl);
  }

  pTTL(key: string): this {
    return this.#add(pttlCommand(key));
  }

  /**
   * Sends the transaction: one store step (`kv.exec`) that checks the
   * watched keys and runs every queued command, or none. Resolves to the
   * replies in order; rejects with {@link WatchError} when a watched key was
   * written since WATCH (EXEC answered null), with {@link MultiErrorReply}
   * when a command failed in its slot (the others ran), and with the lost
   * connection's error when the crash fault strikes its answer (the store
   * ran all of it).
   */
  exec(execAsPipeline?: boolean): Promise<unknown[]> {
    if (execAsPipeline === true) {
      sink?.unsupported?.('multi().exec(true)');
      throw new KvUnsupportedCommand('multi().exec(true)');
    }
    if (this.#refused !== undefined) return Promise.reject(this.#refused);
    return this.#client.execQueued(this.#queue);
  }
}

/** node-redis's upper-case names on a MULTI chain. */
const MULTI_RAW_NAMES: Readonly<Record<string, keyof KvMulti>> = { GET: 'get', SET: 'set', SETEX: 'setEx', PSETEX: 'pSetEx', EXISTS: 'exists', DEL: 'del', GETDEL: 'getDel', INCR: 'incr', INCRBY: 'incrBy', DECR: 'decr', DECRBY: 'decrBy', HSET: 'hSet', HGET: 'hGet', HGETALL: 'hGetAll', HDEL: 'hDel', HINCRBY: 'hIncrBy', HLEN: 'hLen', EXPIRE: 'expire', PEXPIRE: 'pExpire', TTL: 'ttl', PTTL: 'pTTL', EXEC: 'exec' };

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
        if (typeof prop === 'string' && !(prop in target)) {
          const named = missingMethod(target, prop, prop);
          if (named !== undefined) return refusing(named);
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
    // The server forgets the connection's watched keys with it.
    watching.delete(this);
    this.emit('end');
  }

  /** A command node-redis can send goes out; one it cannot (a value of the wrong type) rejects with its TypeError, nothing sent. */
  private sendOrRefuse<T>(r: { c: KvCommand } | { refused: TypeError }): Promise<T> {
    return 'refused' in r ? Promise.reject(r.refused) : this.sendOpen<T>(r.c);
  }

  /** Every command goes through here: a closed client refuses it, as node-redis does, before it reaches the store. */
  private sendOpen<T>(c: KvCommand): Promise<T> {
    if (closed.has(this)) return Promise.reject(new ClientClosedError());
    return send<T>({ ...c, lost: () => this.connectionLost() });
  }

  /**
   * The crash fault dropped this client's connection (a command's answer
   * lost) and node-redis reconnected: the server forgot the keys it
   * watched, and v5 fails the next EXEC of a client that was watching
   * (`_executeMulti` in lib/client/index.ts: `watchEpoch !== socketEpoch`
   * throws `WatchError('Client reconnected after WATCH')`). v4.7 has no
   * such check and would run that EXEC unwatched; the simulation does what
   * v5 does.
   */
  private connectionLost(): void {
    const w = watching.get(this);
    if (w === undefined) return;
    w.keys.clear();
    if (w.known) w.dirty = 'Client reconnected after WATCH';
    w.known = false;
  }

  get(key: string): Promise<string | null> {
    return this.sendOpen(getCommand(key));
  }

  /**
   * SET key value [NX|XX] [PX ms|EX s] [KEEPTTL] [GET]: 'OK', or null when NX/XX refused it.
   * Options as node-redis v4 (`{ NX: true, PX: 30_000 }`) or v5 (`{ condition: 'NX', expiration: { type: 'PX', value: 30_000 } }`) spells them.
   */
  set(key: string, value: string | number, nodeRedisOptions: NodeRedisSetOptions = {}): Promise<string | null> {
    const r = setCommand(key, value, nodeRedisOptions);
    if ('refused' in r) return Promise.reject(r.refused);
    if (r.options.NX && nxAsGetThenSet) return this.getThenSet(r.k, r.v, r.options);
    return this.sendOpen(r.c);
  }

  private async getThenSet(k: string, v: string, options: SetOptions): Promise<string | null> {
    if ((await this.get(k)) !== null) return null;
    const plain = { ...options, NX: false };
    return this.sendOpen({ name: 'set', keys: [k], write: true, args: [shown(v), setArgs(plain)].filter((x) => x !== '').join(' '), run: (s, now) => s.set(k, v, plain, now) });
  }

  /** DEL key [key ...]: how many existed. */
  del(keys: string | readonly string[]): Promise<number> {
    return this.sendOpen(delCommand(keys));
  }

  incr(key: string): Promise<number> {
    return this.sendOpen(incrCommand(key));
  }

  /** INCRBY key increment: the new value. */
  incrBy(key: string, increment: number): Promise<number> {
    return this.sendOpen(incrByCommand(key, increment, 'INCRBY'));
  }

  /** DECR key: the new value. */
  decr(key: string): Promise<number> {
    return this.sendOpen(incrByCommand(key, -1, 'DECR'));
  }

  /** DECRBY key decrement: the new value. */
  decrBy(key: string, decrement: number): Promise<number> {
    return this.sendOpen(incrByCommand(key, decrement, 'DECRBY'));
  }

  /** EXISTS key [key ...] (one key or an array, as node-redis takes them): how many exist. */
  exists(keys: string | readonly string[]): Promise<number> {
    return this.sendOpen(existsCommand(keys));
  }

  /** GETDEL key: the value (null when missing), and the key deleted. */
  getDel(key: string): Promise<string | null> {
    return this.sendOpen(getDelCommand(key));
  }

  /**
   * HSET key field value, or (key, { field: value, … }), a Map, [[f, v], …] or
   * [f, v, …]: how many fields were new. A hash is a key of its own kind:
   * GET, INCR or GETDEL on it (or HSET on a string) is Redis's WRONGTYPE
   * error; EXPIRE, DEL, EXISTS and TTL work on it as on a string. The
   * effects view (`kv.get`, `kv.scan`) reads a hash as the JSON of its fields.
   */
  hSet(key: string, a: unknown, b?: unknown): Promise<number> {
    return this.sendOrRefuse(hsetCommand(key, a, b));
  }

  /** HGET key field: the value, or null. */
  hGet(key: string, field: string): Promise<string | null> {
    return this.sendOpen(hgetCommand(key, field));
  }

  /** HGETALL key: the fields as an object ({} when the key is missing). */
  hGetAll(key: string): Promise<Record<string, string>> {
    return this.sendOpen(hgetallCommand(key));
  }

  /** HLEN key: how many fields. */
  hLen(key: string): Promise<number> {
    return this.sendOpen(hlenCommand(key));
  }

  /** HDEL key field [field ...] (or an array): how many existed. */
  hDel(key: string, ...fields: Array<string | readonly string[]>): Promise<number> {
    return this.sendOpen(hdelCommand(key, fields));
  }

  /** HINCRBY key field increment: the field's new value. */
  hIncrBy(key: string, field: string, increment: number): Promise<number> {
    return this.sendOpen(hincrbyCommand(key, field, increment));
  }

  /** SETEX key seconds value: 'OK' (SET with EX; the older spelling many apps keep). */
  setEx(key: string, seconds: number, value: string | number): Promise<string | null> {
    return this.sendOrRefuse(setExCommand(key, seconds, value, 'SETEX'));
  }

  /** PSETEX key ms value: 'OK'. */
  pSetEx(key: string, ms: number, value: string | number): Promise<string | null> {
    return this.sendOrRefuse(setExCommand(key, ms, value, 'PSETEX'));
  }

  /** EXPIRE key seconds [NX|XX|GT|LT]: 1 when the key exists and the mode let it set the expiry. */
  expire(key: string, seconds: number, mode?: ExpireMode): Promise<number> {
    return this.sendOpen(pexpireCommand(key, seconds, 'EXPIRE', mode));
  }

  /** PEXPIRE key ms [NX|XX|GT|LT]: 1 when the key exists and the mode let it set the expiry. */
  pExpire(key: string, ms: number, mode?: ExpireMode): Promise<number> {
    return this.sendOpen(pexpireCommand(key, ms, 'PEXPIRE', mode));
  }

  /** TTL key: seconds left, -1 without expiry, -2 when missing. */
  async ttl(key: string): Promise<number> {
    return ttlOfPttl(await this.pTTL(key));
  }

  /** PTTL key: ms left, -1 without expiry, -2 when missing. */
  pTTL(key: string): Promise<number> {
    return this.sendOpen(pttlCommand(key));
  }

  /**
   * node-redis's `duplicate()`: a new client of the same store, with its
   * own connection (so its own watched keys), not connected yet — as
   * node-redis's, it needs `await dup.connect()` first. The way an app
   * gives each request its own connection for WATCH … EXEC.
   */
  duplicate(): KvClient {
    const dup = new KvClient();
    closed.add(dup);
    return dup;
  }

  /**
   * MULTI: a chain of commands that `exec()` runs as one transaction (see
   * {@link KvMulti}). node-redis v4/v5 take no argument; ioredis's
   * `multi([['set', …], …])` is named as a form the store lacks.
   */
  multi(...args: unknown[]): KvMulti {
    if (args.length > 0) {
      const m = `multi(${JSON.stringify(args[0])}) with ioredis's array of commands (node-redis chains them: multi().set(k, v).incr(n).exec())`;
      sink?.unsupported?.(m);
      throw new KvUnsupportedCommand(m);
    }
    return new KvMulti(this);
  }

  /**
   * WATCH key [key ...]: 'OK'; the next EXEC of this client fails (node-redis
   * rejects it with {@link WatchError}) if anyone wrote one of the keys
   * since — another request, another instance, or this request itself, as
   * in Redis. A store step (`kv.watch`): where it falls among other
   * requests' writes decides the EXEC. WATCH belongs to the connection, and
   * the simulation's connection is the client `app({ redis })` got: one per
   * process, shared by its requests, as a production app's one client is.
   * So two requests of one process that WATCH and EXEC at once share one
   * set of watched keys and the first EXEC ends it for both, as on a real
   * shared connection (node-redis v4's `isolated` clients and v5's pools
   * are not simulated).
   */
  watch(...keys: Array<string | readonly string[]>): Promise<string> {
    const ks = keys.flat().map((k) => keyOf(k, 'WATCH'));
    const self = this;
    const c: KvCommand = {
      name: 'watch',
      keys: ks,
      write: false,
      run: (s, now) => {
        const w = watchStateOf(self);
        // Watching a key again keeps its first reading: Redis's dirty flag counts from the first WATCH.
        for (const k of ks) if (!w.keys.has(k)) w.keys.set(k, s.version(k, now));
        return 'OK';
      },
    };
    // v5 sets its watch epoch once the answer came (lib/client/index.ts, WATCH).
    return this.sendOpen<string>(c).then((r) => {
      watchStateOf(this).known = true;
      return r;
    });
  }

  /**
   * UNWATCH: 'OK', every key of the connection unwatched. Not a store step:
   * it touches no key, only this connection's own state.
   */
  unwatch(): Promise<string> {
    if (closed.has(this)) return Promise.reject(new ClientClosedError());
    watching.delete(this);
    return Promise.resolve('OK');
  }

  /** @internal A MULTI's exec(): the whole queue as one store command (`kv.exec`). */
  execQueued(queue: readonly Queued[]): Promise<unknown[]> {
    if (closed.has(this)) return Promise.reject(new ClientClosedError());
    const w = watching.get(this);
    // v5's _executeMulti: the client's own watch state is taken (and reset) as the transaction leaves.
    const dirty = w?.dirty;
    if (w !== undefined) {
      w.dirty = undefined;
      w.known = false;
    }
    if (dirty !== undefined) {
      watching.delete(this);
      return Promise.reject(new WatchError(dirty));
    }
    if (execNotAtomic) return this.execOneByOne(queue);
    // The keys watched as EXEC leaves are the ones it checks: its footprint
    // (the queued commands' keys and these) is fixed here, so exhaustive
    // reduction sees every key the step reads.
    const watched = [...(w?.keys ?? new Map<string, number>())];
    const keys = [...new Set([...queue.flatMap((q) => q.c.keys), ...watched.map(([k]) => k)])];
    const self = this;
    const c: KvCommand = {
      name: 'exec',
      keys,
      // The trace shows the transaction after its keys: `kv.exec order:1 idem:k (SET order:1 "x"; SET idem:k "…") → [OK, OK]`.
      args: `(${queue.map((q) => [q.c.verb ?? (q.c.name === 'pexpire' ? 'PEXPIRE' : q.c.name.toUpperCase()), ...q.c.keys, ...(q.c.args ? [q.c.args] : [])].join(' ')).join('; ')})`,
      queued: queue.map((q) => q.c.name),
      write: queue.some((q) => q.c.write),
      run: (s, now) => {
        // EXEC unwatches every key of the connection, whatever it answers.
        watching.delete(self);
        if (watched.some(([k, v]) => s.version(k, now) !== v)) return null;
        return queue.map((q) => {
          try {
            const raw = q.c.run(s, now);
            return q.reply === undefined ? raw : q.reply(raw as never);
          } catch (e) {
            return new ErrorReply(e instanceof Error ? e.message : String(e));
          }
        });
      },
    };
    return this.sendOpen<unknown[] | null>(c).then(execAnswer);
  }

  /** The canary's EXEC ({@link plantExecNotAtomic}): each queued command its own step, in order. */
  private async execOneByOne(queue: readonly Queued[]): Promise<unknown[]> {
    watching.delete(this);
    const replies: unknown[] = [];
    for (const q of queue) {
      let raw: unknown;
      try {
        raw = await this.sendOpen(q.c);
      } catch (e) {
        if (e instanceof ErrorReply || (e instanceof Error && e.name === 'SocketClosedUnexpectedlyError') || e instanceof ClientClosedError) throw e;
        replies.push(new ErrorReply(e instanceof Error ? e.message : String(e)));
        continue;
      }
      replies.push(q.reply === undefined ? raw : q.reply(raw as never));
    }
    return execAnswer(replies);
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
