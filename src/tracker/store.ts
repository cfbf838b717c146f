import Database from 'better-sqlite3';
import { DEFAULT_TENANT, type ReportInput } from './validate.js';

/**
 * SQLite storage for the tracker (schema of SPEC §3). Statements are
 * prepared once per connection and reused; `reset()` empties the tables so a
 * simulator can reuse one in-memory connection across thousands of
 * scenarios instead of reopening it. All methods are synchronous; callers
 * group them into transactions with {@link Store.transaction}.
 */

/** A row of `reports`. `idem_key` holds the scoped key (see scope.ts) or null. */
export interface ReportRow {
  id: number;
  run_id: string;
  tenant: string;
  module: string;
  title: string;
  steps: string;
  idem_key: string | null;
  created_at: number;
}

/** Status of an idempotency key row. */
export type KeyStatus = 'in_progress' | 'done';

/**
 * A row of `idempotency_keys`. `key` is the scoped key; `fence` is null for
 * rows written by key_split (which has no fencing).
 */
export interface KeyRow {
  key: string;
  fingerprint: string;
  status: KeyStatus;
  locked_at: number | null;
  response_code: number | null;
  response_body: string | null;
  fence: number | null;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS reports (
  id INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL,
  tenant TEXT NOT NULL DEFAULT 'default',
  module TEXT NOT NULL,
  title TEXT NOT NULL,
  steps TEXT NOT NULL,
  idem_key TEXT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS reports_run_id ON reports(run_id);
CREATE TABLE IF NOT EXISTS idempotency_keys (
  key TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('in_progress', 'done')),
  locked_at INTEGER,
  response_code INTEGER,
  response_body TEXT,
  fence INTEGER
);
`;

/** Optional filter for {@link Store.countReports}. */
export interface ReportFilter {
  runId?: string;
  title?: string;
}

function prepareAll(db: Database.Database) {
  return {
    insertReport: db.prepare<[string, string, string, string, string, string | null, number], void>(
      'INSERT INTO reports (run_id, tenant, module, title, steps, idem_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    getReport: db.prepare<[number], ReportRow>('SELECT * FROM reports WHERE id = ?'),
    // Narrow, plucked reads for the checkers: building a seven-column row
    // object costs several times the lookup itself.
    ownerOf: db.prepare<[number], { run_id: string; tenant: string }>('SELECT run_id, tenant FROM reports WHERE id = ?'),
    idsForRun: db.prepare<[string, string], number>('SELECT id FROM reports WHERE run_id = ? AND tenant = ? ORDER BY id').pluck(),
    totalChanges: db.prepare<[], number>('SELECT total_changes()').pluck(),
    reportsForRun: db.prepare<[string], ReportRow>('SELECT * FROM reports WHERE run_id = ? ORDER BY id'),
    tenantReportsForRun: db.prepare<[string, string], ReportRow>('SELECT * FROM reports WHERE run_id = ? AND tenant = ? ORDER BY id'),
    allReports: db.prepare<[], ReportRow>('SELECT * FROM reports ORDER BY id'),
    countAll: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM reports'),
    countRun: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM reports WHERE run_id = ?'),
    countTitle: db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM reports WHERE title = ?'),
    countRunTitle: db.prepare<[string, string], { n: number }>(
      'SELECT count(*) AS n FROM reports WHERE run_id = ? AND title = ?',
    ),
    // Raw (an array) and without the key we already hold: better-sqlite3
    // builds a row object through V8's API, property by property, at about
    // twice the cost of the lookup; a JS literal from the array is cheap.
    getKey: db.prepare<[string], [string, KeyStatus, number | null, number | null, string | null, number | null]>(
      'SELECT fingerprint, status, locked_at, response_code, response_body, fence FROM idempotency_keys WHERE key = ?',
    ).raw(),
    allKeys: db.prepare<[], KeyRow>('SELECT * FROM idempotency_keys ORDER BY key'),
    insertPlaceholder: db.prepare<[string, string, number, number], void>(
      `INSERT INTO idempotency_keys (key, fingerprint, status, locked_at, response_code, response_body, fence)
       VALUES (?, ?, 'in_progress', ?, NULL, NULL, ?)`,
    ),
    // Only the check-then-act canary (key_atomic_racy_claim) writes this way.
    upsertPlaceholder: db.prepare<[string, string, number, number], void>(
      `INSERT OR REPLACE INTO idempotency_keys (key, fingerprint, status, locked_at, response_code, response_body, fence)
       VALUES (?, ?, 'in_progress', ?, NULL, NULL, ?)`,
    ),
    takeOver: db.prepare<[number, number, string], void>(
      'UPDATE idempotency_keys SET locked_at = ?, fence = ? WHERE key = ?',
    ),
    finishFenced: db.prepare<[number, string, string, number], void>(
      `UPDATE idempotency_keys SET status = 'done', response_code = ?, response_body = ?
       WHERE key = ? AND status = 'in_progress' AND fence = ?`,
    ),
    finishUnfenced: db.prepare<[number, string, string], void>(
      `UPDATE idempotency_keys SET status = 'done', response_code = ?, response_body = ? WHERE key = ?`,
    ),
    // Known-wrong variants only (key_atomic_unfenced_finish / _unfenced_release): the status guard without the fence.
    finishStatusOnly: db.prepare<[number, string, string], void>(
      `UPDATE idempotency_keys SET status = 'done', response_code = ?, response_body = ? WHERE key = ? AND status = 'in_progress'`,
    ),
    // No fence and therefore no status either: `status = 'in_progress'` would itself guard a
    // finished row, as it would in the finish (see key_atomic_nofence).
    deleteAnyPlaceholder: db.prepare<[string], void>(`DELETE FROM idempotency_keys WHERE key = ?`),
    deletePlaceholder: db.prepare<[string, number], void>(
      `DELETE FROM idempotency_keys WHERE key = ? AND status = 'in_progress' AND fence = ?`,
    ),
    insertDone: db.prepare<[string, string, number, number, string], void>(
      `INSERT INTO idempotency_keys (key, fingerprint, status, locked_at, response_code, response_body, fence)
       VALUES (?, ?, 'done', ?, ?, ?, NULL)`,
    ),
    clearReports: db.prepare('DELETE FROM reports'),
    clearKeys: db.prepare('DELETE FROM idempotency_keys'),
  };
}

/** One connection to the tracker database. Several instances may share it. */
export class Store {
  /** The underlying connection (for transactions and ad-hoc inspection). */
  readonly db: Database.Database;
  private readonly s: ReturnType<typeof prepareAll>;
  /**
   * The number of reports, kept in step with our own inserts so that the
   * simulated network can ask for it before and after every request without
   * a query; -1 means unknown (the next {@link Store.countReports} asks
   * SQLite). Only an in-memory database is private to this connection, so
   * only there can the count be trusted; file databases always ask.
   */
  private reportCount = -1;
  private readonly cacheCount: boolean;
  /** Depth of transactions made by {@link Store.transaction} now running. */
  private txDepth = 0;
  /** Reports inserted inside the running transaction: counted once it commits. */
  private pendingInserts = 0;
  /** A nested transaction rolled back: its inserts are gone, but which? Recount. */
  private pendingUnknown = false;
  /**
   * What `total_changes()` (rows written by this connection, rolled back or
   * not) should read if every write went through this class. A different
   * reading means someone wrote through `db` directly: the cached count is
   * not trusted then, and reset() cannot assume the tables are empty.
   */
  private changesExpected = -1;
  /** Per table: nothing was written to it since the last reset (known empty). */
  private reportsClean = false;
  private keysClean = false;

  /** The file path, or `':memory:'`. */
  readonly path: string;

  /**
   * Opens `path` (a file, or `':memory:'`) — or uses an open connection
   * (the service API hands the tracker its database) — and creates the
   * schema if missing.
   */
  constructor(pathOrDb: string | Database.Database) {
    if (typeof pathOrDb === 'string') {
      this.path = pathOrDb;
      this.db = new Database(pathOrDb);
      // WAL lets readers run beside the single writer when a file is shared
      // by several connections (two real processes on one database).
      if (pathOrDb !== ':memory:' && pathOrDb !== '') this.db.pragma('journal_mode = WAL');
    } else {
      this.db = pathOrDb;
      this.path = pathOrDb.memory ? ':memory:' : pathOrDb.name;
    }
    this.cacheCount = this.path === ':memory:';
    this.db.exec(SCHEMA);
    this.s = prepareAll(this.db);
  }

  /**
   * Wraps a synchronous function in a transaction (better-sqlite3 semantics:
   * a throw rolls back). Call `.immediate(...)` for `BEGIN IMMEDIATE`.
   * Never pass an async function: a transaction cannot span an await.
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): Database.Transaction<(...args: A) => R> {
    const tx = this.db.transaction(fn);
    if (!this.cacheCount) return tx;
    // Each variant is wrapped so the report count learns whether the
    // reports inserted inside were committed or rolled back.
    const t = this.tracked(tx) as Database.Transaction<(...args: A) => R>;
    const variants = {
      default: { value: t },
      deferred: { value: this.tracked(tx.deferred) },
      immediate: { value: this.tracked(tx.immediate) },
      exclusive: { value: this.tracked(tx.exclusive) },
      database: { value: this.db, enumerable: true },
    };
    for (const v of [t, variants.deferred.value, variants.immediate.value, variants.exclusive.value]) {
      Object.defineProperties(v, variants);
    }
    return t;
  }

  private tracked<A extends unknown[], R>(run: (...args: A) => R): (...args: A) => R {
    return (...args: A): R => {
      this.txDepth++;
      let ok = false;
      try {
        const r = run(...args);
        ok = true;
        return r;
      } finally {
        if (--this.txDepth > 0) {
          // A nested transaction (a savepoint): the outer one decides, unless this one rolled back.
          if (!ok) this.pendingUnknown = true;
        } else {
          const open = this.db.inTransaction; // still inside someone else's transaction
          if (open || this.pendingUnknown) this.reportCount = -1;
          else if (ok && this.reportCount >= 0) this.reportCount += this.pendingInserts;
          this.pendingInserts = 0;
          this.pendingUnknown = false;
        }
      }
    };
  }

  /** Inserts a report for `tenant` and returns its id. */
  insertReport(r: ReportInput, idemKey: string | null, createdAtMs: number, tenant: string = DEFAULT_TENANT): number {
    const info = this.s.insertReport.run(r.run_id, tenant, r.module, r.title, r.steps, idemKey, createdAtMs);
    this.wrote(info.changes);
    this.reportsClean = false;
    if (this.reportCount >= 0) {
      if (!this.db.inTransaction) this.reportCount++; // autocommit: the insert is committed
      else if (this.txDepth > 0) this.pendingInserts++;
      else this.reportCount = -1; // inside a transaction we do not see the end of
    }
    return Number(info.lastInsertRowid);
  }

  /** The report with this id, if any. */
  getReport(id: number): ReportRow | undefined {
    return this.s.getReport.get(id);
  }

  /** Reports of one run (of one tenant, when given), oldest first. */
  reportsForRun(runId: string, tenant?: string): ReportRow[] {
    return tenant === undefined ? this.s.reportsForRun.all(runId) : this.s.tenantReportsForRun.all(runId, tenant);
  }

  /** Every report, oldest first. */
  allReports(): ReportRow[] {
    return this.s.allReports.all();
  }

  /** Ids of one tenant's run's reports, oldest first (cheaper than {@link Store.reportsForRun}). */
  reportIdsForRun(runId: string, tenant: string = DEFAULT_TENANT): number[] {
    return this.s.idsForRun.all(runId, tenant);
  }

  /** The run and tenant a report belongs to, or undefined when no report has this id. */
  ownerOfReport(id: number): { run_id: string; tenant: string } | undefined {
    return this.s.ownerOf.get(id);
  }

  /** How many reports match the filter (all reports when it is empty). */
  countReports(filter?: ReportFilter): number {
    if (filter === undefined || (filter.runId === undefined && filter.title === undefined)) {
      if (this.reportCount >= 0 && !this.db.inTransaction && this.s.totalChanges.get() === this.changesExpected) {
        return this.reportCount;
      }
      const n = this.s.countAll.get()!.n;
      if (this.cacheCount && !this.db.inTransaction) {
        this.reportCount = n;
        this.changesExpected = this.s.totalChanges.get()!;
      }
      return n;
    }
    const { runId, title } = filter;
    if (runId !== undefined && title !== undefined) return this.s.countRunTitle.get(runId, title)!.n;
    if (runId !== undefined) return this.s.countRun.get(runId)!.n;
    return this.s.countTitle.get(title!)!.n;
  }

  /** The key row for a scoped key, if any. */
  getKeyRow(scopedKey: string): KeyRow | undefined {
    const r = this.s.getKey.get(scopedKey);
    return r === undefined ? undefined : { key: scopedKey, fingerprint: r[0], status: r[1], locked_at: r[2], response_code: r[3], response_body: r[4], fence: r[5] };
  }

  /** Every key row, ordered by key. */
  keyRows(): KeyRow[] {
    return this.s.allKeys.all();
  }

  /** Writes a new `in_progress` placeholder (key_atomic claim). */
  insertPlaceholder(scopedKey: string, fp: string, lockedAtMs: number, fence: number): void {
    this.wrote(this.s.insertPlaceholder.run(scopedKey, fp, lockedAtMs, fence).changes, true);
  }

  /**
   * Writes an `in_progress` placeholder whatever the key's row holds now
   * (`INSERT OR REPLACE`): the write of a check-then-act claim that decided
   * on an earlier read. Only the known-wrong `key_atomic_racy_claim` uses it.
   */
  upsertPlaceholder(scopedKey: string, fp: string, lockedAtMs: number, fence: number): void {
    this.wrote(this.s.upsertPlaceholder.run(scopedKey, fp, lockedAtMs, fence).changes, true);
  }

  /** Takes over an expired placeholder with a new lock time and fence. */
  takeOver(scopedKey: string, lockedAtMs: number, fence: number): void {
    this.wrote(this.s.takeOver.run(lockedAtMs, fence, scopedKey).changes, true);
  }

  /**
   * Marks the key done with the response. With a fence the update only
   * touches an `in_progress` row holding that fence; with `null` it is
   * unconditional (fencing off). Returns the number of rows touched.
   */
  finishKey(scopedKey: string, code: number, body: string, fence: number | null): number {
    const info =
      fence === null ? this.s.finishUnfenced.run(code, body, scopedKey) : this.s.finishFenced.run(code, body, scopedKey, fence);
    this.wrote(info.changes, true);
    return info.changes;
  }

  /**
   * The status guard without the fence (key_atomic_unfenced_finish, a
   * known-wrong variant): marks whatever in-progress row holds the key done.
   */
  finishKeyStatusOnly(scopedKey: string, code: number, body: string): number {
    const info = this.s.finishStatusOnly.run(code, body, scopedKey);
    this.wrote(info.changes, true);
    return info.changes;
  }

  /**
   * Deletes the key's row without asking whose it is (key_atomic_unfenced_release,
   * known-wrong): a stale request that crashes frees a key another request holds or has finished.
   */
  deleteAnyPlaceholder(scopedKey: string): number {
    const n = this.s.deleteAnyPlaceholder.run(scopedKey).changes;
    this.wrote(n, true);
    return n;
  }

  /** Deletes my placeholder (only if it still holds my fence). */
  deletePlaceholder(scopedKey: string, fence: number): number {
    const n = this.s.deletePlaceholder.run(scopedKey, fence).changes;
    this.wrote(n, true);
    return n;
  }

  /** Registers a key as done in one insert (key_split); throws on a duplicate key. */
  insertDoneKey(scopedKey: string, fp: string, atMs: number, code: number, body: string): void {
    this.wrote(this.s.insertDone.run(scopedKey, fp, atMs, code, body).changes, true);
  }

  /**
   * Deletes all rows (ids restart at 1); much cheaper than reopening. Skips
   * the deletes when the connection has changed nothing since the last reset
   * (`total_changes()` counts every write on this connection, ours or not).
   */
  reset(): void {
    // Only writes through this class are tracked per table; any other write
    // (or an open transaction) means both tables are cleared.
    const tracked = this.cacheCount && !this.db.inTransaction && this.s.totalChanges.get() === this.changesExpected;
    if (!(tracked && this.reportsClean)) this.s.clearReports.run();
    if (!(tracked && this.keysClean)) this.s.clearKeys.run();
    if (this.cacheCount && !this.db.inTransaction) {
      this.reportCount = 0;
      this.changesExpected = this.s.totalChanges.get()!;
      this.reportsClean = true;
      this.keysClean = true;
    } else {
      this.reportCount = -1;
    }
  }

  /** Bookkeeping after a write through this class (`table`: which table it touched). */
  private wrote(changes: number, keys = false): void {
    this.changesExpected += changes;
    if (keys) this.keysClean = false;
  }

  /** Closes the connection. */
  close(): void {
    this.db.close();
  }
}

/** The tracker's SQL schema (SPEC §3): what the tracker service's setup creates. */
export const TRACKER_SCHEMA = SCHEMA;

const over = new WeakMap<Database.Database, Store>();

/** The store over an open connection (one per connection, so its caches stay coherent). */
export function storeOn(db: Database.Database): Store {
  let s = over.get(db);
  if (s === undefined) over.set(db, (s = new Store(db)));
  return s;
}

/**
 * Opens a store on a file path or `':memory:'` (the default).
 *
 * @example
 * const store = openStore();          // in memory, for simulation
 * const disk = openStore('/tmp/t.db'); // a file, WAL mode
 */
export function openStore(pathOrMemory = ':memory:'): Store {
  return new Store(pathOrMemory);
}

/** True when `e` is a SQLite error with this code (e.g. `SQLITE_BUSY`). */
export function isSqliteError(e: unknown, codePrefix: string): boolean {
  return e instanceof Database.SqliteError && e.code.startsWith(codePrefix);
}
