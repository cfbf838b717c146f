import type { ServiceDb } from '../service/definition.js';

/** The table that holds the simulated key-value store (in the service's SQLite database: shared by every instance, kept across kills). */
export const KV_TABLE = 'retrysim_kv';

/** Creates the store's table on a fresh database. */
export function setupKv(db: ServiceDb): void {
  db.exec(`CREATE TABLE ${KV_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at REAL)`);
}

/** Redis's answer to a fractional count of seconds or ms. */
const NOT_INTEGER = 'ERR value is not an integer or out of range';

/**
 * How a hash is kept in the store's one value column: this prefix (a NUL no
 * text an app stores starts with) and the JSON of its fields. A key holds a
 * string or a hash, as in Redis, and one `retrysim_kv` row either way, so
 * expiry, DEL, EXISTS and kills treat both alike.
 */
const HASH_PREFIX = '\u0000retrysim-hash:';
/** Redis's answer to a command on a key of the other kind. */
const WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value';

/** A stored value that is a hash: its fields; undefined for a string. */
export function hashOf(value: string): Record<string, string> | undefined {
  // Without a prototype: a field named `__proto__` is a field, as in Redis.
  return value.startsWith(HASH_PREFIX) ? Object.assign(Object.create(null) as Record<string, string>, JSON.parse(value.slice(HASH_PREFIX.length)) as Record<string, string>) : undefined;
}

/** A stored value as the effects view shows it: a string as it is, a hash as the JSON of its fields. */
export function viewOf(value: string): string {
  return value.startsWith(HASH_PREFIX) ? value.slice(HASH_PREFIX.length) : value;
}

/** EXPIRE's and PEXPIRE's condition (Redis 7). */
export type ExpireMode = 'NX' | 'XX' | 'GT' | 'LT';
const EXPIRE_MODES: readonly string[] = ['NX', 'XX', 'GT', 'LT'];

/** Options of SET, as Redis/Valkey (and `@redis/client`) spell them. */
export interface SetOptions {
  /** Only set when the key does not exist. */
  NX?: boolean;
  /** Only set when the key exists. */
  XX?: boolean;
  /** Expire after this many ms. */
  PX?: number;
  /** Expire after this many seconds. */
  EX?: number;
  /** Keep the key's time to live (SET otherwise clears it, as Redis does). */
  KEEPTTL?: boolean;
  /** Answer the previous value instead of OK. */
  GET?: boolean;
}

/**
 * The key-value store's semantics, one synchronous command at a time at a
 * given time `nowMs` (the request host turns each command into an
 * interleaving point first). Redis/Valkey shape: strings with an optional
 * expiry; an expired key is gone for every command (Redis expires lazily on
 * access, and so does this). Values are strings.
 */
export class KvStore {
  private readonly getSt;
  private readonly upsertSt;
  private readonly delSt;
  private readonly expireSt;
  /**
   * How many times each key was written (set, deleted, expired, its expiry
   * changed): what WATCH records and EXEC compares, as Redis marks a
   * watched key dirty on any write to it, even one that leaves the same
   * value (an ABA write aborts the transaction too). Only equality is read,
   * so a store reused across runs needs no reset.
   */
  private readonly versions = new Map<string, number>();

  constructor(readonly db: ServiceDb) {
    this.getSt = db.prepare(`SELECT value, expires_at AS expiresAt FROM ${KV_TABLE} WHERE key = ?`);
    this.upsertSt = db.prepare(`INSERT INTO ${KV_TABLE} (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`);
    this.delSt = db.prepare(`DELETE FROM ${KV_TABLE} WHERE key = ?`);
    this.expireSt = db.prepare(`UPDATE ${KV_TABLE} SET expires_at = ? WHERE key = ?`);
  }

  private live(key: string, nowMs: number): { value: string; expiresAt: number | null } | undefined {
    const row = this.getSt.get(key) as { value: string; expiresAt: number | null } | undefined;
    if (row === undefined) return undefined;
    if (row.expiresAt !== null && row.expiresAt <= nowMs) {
      this.delSt.run(key); // lazy expiry, as Redis does on access
      this.touch(key); // an expiry aborts a transaction watching the key (Redis 6.0.9 and later)
      return undefined;
    }
    return row;
  }

  private touch(key: string): void {
    this.versions.set(key, (this.versions.get(key) ?? 0) + 1);
  }

  /**
   * WATCH's and EXEC's reading of a key: its write count, after expiring it
   * if its time is up (a key that expires between WATCH and EXEC counts as
   * written, as in Redis since 6.0.9).
   */
  version(key: string, nowMs: number): number {
    this.live(key, nowMs);
    return this.versions.get(key) ?? 0;
  }

  get(key: string, nowMs: number): string | null {
    const row = this.live(key, nowMs);
    return row === undefined ? null : this.text(row.value);
  }

  /** A string key's value; a hash's is Redis's WRONGTYPE error. */
  private text(value: string): string {
    if (value.startsWith(HASH_PREFIX)) throw new Error(WRONGTYPE);
    return value;
  }

  /** SET: 'OK', or null when NX/XX refused it (with GET: the previous value, or null). */
  set(key: string, value: string, o: SetOptions, nowMs: number): string | null {
    if (o.NX && o.XX) throw new Error('ERR syntax error (NX and XX together)');
    const old = this.live(key, nowMs);
    // SET replaces a key of any kind; with GET, a hash's old value is WRONGTYPE (and nothing is written), as in Redis.
    if (o.GET && old !== undefined) this.text(old.value);
    if ((o.NX && old !== undefined) || (o.XX && old === undefined)) return o.GET ? old?.value ?? null : null;
    // Redis refuses a fractional EX or PX (`EX: ttlMs / 1000` fails every SET in production); so does the store.
    if ((o.PX !== undefined && !Number.isInteger(o.PX)) || (o.EX !== undefined && !Number.isInteger(o.EX))) throw new Error(NOT_INTEGER);
    const ttlMs = o.PX ?? (o.EX !== undefined ? o.EX * 1000 : undefined);
    if (ttlMs !== undefined && !(Number.isFinite(ttlMs) && ttlMs > 0)) throw new Error(`ERR invalid expire time in 'set' command (${ttlMs} ms)`);
    const expiresAt = ttlMs !== undefined ? nowMs + ttlMs : o.KEEPTTL ? old?.expiresAt ?? null : null;
    this.upsertSt.run(key, value, expiresAt);
    this.touch(key);
    return o.GET ? old?.value ?? null : 'OK';
  }

  /** DEL: how many of the keys existed. */
  del(keys: readonly string[], nowMs: number): number {
    let n = 0;
    for (const k of keys) {
      if (this.live(k, nowMs) === undefined) continue;
      n += this.delSt.run(k).changes;
      this.touch(k);
    }
    return n;
  }

  /** INCR: the new value (a missing key counts from 0). */
  incr(key: string, nowMs: number): number {
    return this.incrBy(key, 1, nowMs);
  }

  /** INCRBY (DECR and DECRBY are negative steps): the new value, the key's expiry kept (a missing key counts from 0). */
  incrBy(key: string, by: number, nowMs: number): number {
    if (!Number.isInteger(by)) throw new Error(NOT_INTEGER);
    const old = this.live(key, nowMs);
    const n = old === undefined ? 0 : Number(this.text(old.value));
    if (!Number.isInteger(n)) throw new Error(NOT_INTEGER);
    this.upsertSt.run(key, String(n + by), old?.expiresAt ?? null);
    this.touch(key);
    return n + by;
  }

  /** EXISTS: how many of the keys exist (a key named twice counts twice, as in Redis). */
  exists(keys: readonly string[], nowMs: number): number {
    let n = 0;
    for (const k of keys) if (this.live(k, nowMs) !== undefined) n++;
    return n;
  }

  /** GETDEL: the value, and the key deleted; null when it does not exist. */
  getDel(key: string, nowMs: number): string | null {
    const row = this.live(key, nowMs);
    if (row === undefined) return null;
    const value = this.text(row.value);
    this.delSt.run(key);
    this.touch(key);
    return value;
  }

  /** A hash key's fields (a copy), {} when missing; a string's is WRONGTYPE. */
  private fields(key: string, nowMs: number): { fields: Record<string, string>; expiresAt: number | null } | undefined {
    const row = this.live(key, nowMs);
    if (row === undefined) return undefined;
    const h = hashOf(row.value);
    if (h === undefined) throw new Error(WRONGTYPE);
    return { fields: h, expiresAt: row.expiresAt };
  }

  private writeHash(key: string, fields: Record<string, string>, expiresAt: number | null): void {
    // A hash with no field left is no key at all, as in Redis.
    if (Object.keys(fields).length === 0) this.delSt.run(key);
    else this.upsertSt.run(key, HASH_PREFIX + JSON.stringify(fields), expiresAt);
    this.touch(key);
  }

  /** HSET key field value [field value ...]: how many fields were new; the key's expiry kept. */
  hset(key: string, pairs: ReadonlyArray<readonly [string, string]>, nowMs: number): number {
    const h = this.fields(key, nowMs);
    const fields = h?.fields ?? (Object.create(null) as Record<string, string>);
    let added = 0;
    for (const [f, v] of pairs) {
      if (!Object.hasOwn(fields, f)) added++;
      fields[f] = v;
    }
    this.writeHash(key, fields, h?.expiresAt ?? null);
    return added;
  }

  /** HGET key field: the value, or null. */
  hget(key: string, field: string, nowMs: number): string | null {
    const f = this.fields(key, nowMs)?.fields;
    return f !== undefined && Object.hasOwn(f, field) ? f[field]! : null;
  }

  /** HGETALL key: every field (an object without a prototype, as node-redis answers; empty when missing). */
  hgetall(key: string, nowMs: number): Record<string, string> {
    return Object.assign(Object.create(null) as Record<string, string>, this.fields(key, nowMs)?.fields ?? {});
  }

  /** HDEL key field [field ...]: how many existed. */
  hdel(key: string, names: readonly string[], nowMs: number): number {
    const h = this.fields(key, nowMs);
    if (h === undefined) return 0;
    let n = 0;
    for (const f of names) {
      if (!Object.hasOwn(h.fields, f)) continue;
      delete h.fields[f];
      n++;
    }
    if (n > 0) this.writeHash(key, h.fields, h.expiresAt);
    return n;
  }

  /** HINCRBY key field increment: the field's new value (a missing one counts from 0). */
  hincrby(key: string, field: string, by: number, nowMs: number): number {
    if (!Number.isInteger(by)) throw new Error(NOT_INTEGER);
    const h = this.fields(key, nowMs);
    const fields = h?.fields ?? (Object.create(null) as Record<string, string>);
    const n = Object.hasOwn(fields, field) ? Number(fields[field]) : 0;
    if (!Number.isInteger(n)) throw new Error('ERR hash value is not an integer');
    fields[field] = String(n + by);
    this.writeHash(key, fields, h?.expiresAt ?? null);
    return n + by;
  }

  /** HLEN key: how many fields. */
  hlen(key: string, nowMs: number): number {
    return Object.keys(this.fields(key, nowMs)?.fields ?? {}).length;
  }

  /**
   * PEXPIRE [NX|XX|GT|LT]: 1 when the key exists and the mode lets the new
   * expiry be set (NX: it has none; XX: it has one; GT/LT: the new one is
   * later/earlier, no expiry counting as infinite, as Redis 7 does), else 0.
   */
  pexpire(key: string, ms: number, nowMs: number, mode?: ExpireMode): number {
    if (!Number.isInteger(ms)) throw new Error(NOT_INTEGER);
    if (mode !== undefined && !EXPIRE_MODES.includes(mode)) throw new Error(`ERR Unsupported option ${String(mode)}`);
    const row = this.live(key, nowMs);
    if (row === undefined) return 0;
    const next = nowMs + ms;
    const cur = row.expiresAt ?? Number.POSITIVE_INFINITY;
    if ((mode === 'NX' && row.expiresAt !== null) || (mode === 'XX' && row.expiresAt === null) || (mode === 'GT' && !(next > cur)) || (mode === 'LT' && !(next < cur))) return 0;
    if (ms <= 0) this.delSt.run(key);
    else this.expireSt.run(nowMs + ms, key);
    this.touch(key);
    return 1;
  }

  /** PTTL: ms left, -1 without an expiry, -2 when the key does not exist. */
  pttl(key: string, nowMs: number): number {
    const row = this.live(key, nowMs);
    if (row === undefined) return -2;
    return row.expiresAt === null ? -1 : Math.max(0, Math.round(row.expiresAt - nowMs));
  }

  /**
   * A DynamoDB-style conditional put: writes `value` only when `condition`
   * holds for the current value (undefined when the key does not exist),
   * e.g. `(old) => old === undefined` for `attribute_not_exists(pk)`.
   * Answers whether it wrote (false: ConditionalCheckFailed).
   */
  putIf(key: string, value: string, condition: (old: string | undefined) => boolean, ttlMs: number | undefined, nowMs: number): boolean {
    const old = this.live(key, nowMs);
    if (!condition(old?.value)) return false;
    this.upsertSt.run(key, value, ttlMs === undefined ? null : nowMs + ttlMs);
    this.touch(key);
    return true;
  }

  /** Every live key with this prefix and its value (a hash's as the JSON of its fields), in key order (for counting effects; not a command). */
  scan(prefix: string, nowMs = -Infinity): Array<[string, string]> {
    const rows = this.db.prepare(`SELECT key, value, expires_at AS expiresAt FROM ${KV_TABLE} WHERE substr(key, 1, ?) = ? ORDER BY key`).all(prefix.length, prefix) as Array<{ key: string; value: string; expiresAt: number | null }>;
    return rows.filter((r) => r.expiresAt === null || r.expiresAt > nowMs).map((r) => [r.key, viewOf(r.value)]);
  }
}
