import Database from 'better-sqlite3';
import type { ServiceDb, ServiceDefinition } from './definition.js';
import { describeThrow, ServiceError } from './errors.js';

/**
 * An `async setup(db)` — a query builder's schema calls awaited (Kysely's
 * `await db.schema.createTable(…).execute()`, Drizzle's migrate) — is
 * awaited once, when the module is loaded (`retrysim` commands) or first run
 * (`runServiceCase`), on a scratch in-memory database. What it left there —
 * its schema in creation order, its rows, AUTOINCREMENT counters,
 * `foreign_keys` and `user_version` — becomes a synchronous setup that
 * rebuilds the same database on every connection the simulation (or
 * `serve`, on a fresh file) opens. A database is set up where no await can
 * happen (a run's instances open theirs synchronously), so the promise
 * cannot be awaited there; until 2026-12 an async setup was refused in one
 * line, and its author rewrote working Kysely code as raw SQL.
 */
const rebuilt = new WeakMap<object, (db: ServiceDb) => void>();

/** Whether `setup` is declared `async` (its tables exist only once its promise settles). */
export function isAsyncSetup(setup: unknown): boolean {
  return typeof setup === 'function' && (setup as { constructor?: { name?: string } }).constructor?.name === 'AsyncFunction';
}

/** The synchronous rebuild of an async setup that {@link awaitAsyncSetup} ran, if it ran. */
export function rebuiltSetup(def: ServiceDefinition): ((db: ServiceDb) => void) | undefined {
  return rebuilt.get(def.setup);
}

/**
 * Runs `def.setup` once on a scratch database and keeps what it built, when
 * it is `async` (a no-op otherwise, and the second time). `around` runs it
 * under the load's clock (the simulation's epoch for `check`). A throw or a
 * rejection is the service's one line, as a synchronous setup's throw is.
 */
export async function awaitAsyncSetup(def: ServiceDefinition, around: <T>(f: () => Promise<T>) => Promise<T> = (f) => f()): Promise<void> {
  if (!isAsyncSetup(def.setup) || rebuilt.has(def.setup)) return;
  const scratch = new Database(':memory:');
  try {
    try {
      await around(() => settledOrIdle(def, Promise.resolve(def.setup(scratch))));
    } catch (e) {
      if (e instanceof ServiceError) throw e;
      throw new ServiceError(def.name, `setup threw ${describeThrow(e)}`);
    }
    rebuilt.set(def.setup, rebuildOf(scratch));
  } finally {
    scratch.close();
  }
}

/**
 * `made`, or a one-line error once the process has nothing left to do while
 * it is still pending (an await on a promise nothing will resolve): Node
 * would otherwise exit at once with code 13 and not a word (found with a
 * setup awaiting `new Promise(() => {})`).
 */
async function settledOrIdle(def: ServiceDefinition, made: Promise<unknown>): Promise<void> {
  let idle: (() => void) | undefined;
  const stuck = new Promise<never>((_, reject) => {
    idle = () => reject(new ServiceError(def.name, 'setup never settled: its promise was still pending with nothing left for it to wait on (no timer, no I/O) — it awaits something that never resolves'));
  });
  process.once('beforeExit', idle!);
  try {
    await Promise.race([made, stuck]);
  } finally {
    process.off('beforeExit', idle!);
  }
}

const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

/**
 * A table's rows as they are now, rowid included (a WITHOUT ROWID table's
 * key is its columns), and the INSERT that puts them back: the seed rows a
 * run starts from (db.ts) and an async setup's rebuild share it.
 */
export function tableRows(db: ServiceDb, table: string): { insert: string; values: unknown[][] } {
  // table_info lists the columns one can insert into (generated columns are table_xinfo's hidden ones).
  const cols = (db.prepare(`PRAGMA table_info(${q(table)})`).all() as Array<{ name: string }>).map((c) => c.name);
  const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as string | undefined;
  const all = /\bWITHOUT\s+ROWID\b/i.test(sql ?? '') ? cols.map(q) : ['rowid', ...cols.map(q)];
  const values = db.prepare(`SELECT ${all.join(', ')} FROM ${q(table)}`).raw().all() as unknown[][];
  return { insert: `INSERT INTO ${q(table)} (${all.join(', ')}) VALUES (${all.map(() => '?').join(', ')})`, values };
}

/** A synchronous function that builds on an empty connection what `db` holds now. */
function rebuildOf(db: ServiceDb): (db: ServiceDb) => void {
  // sqlite_master's rows are in creation order: a table before its indexes, triggers and the views over it.
  const schema = db.prepare("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid").all() as Array<{ type: string; name: string; sql: string }>;
  const rows: Array<{ insert: string; values: unknown[][] }> = [];
  for (const t of schema.filter((s) => s.type === 'table' && !/^\s*CREATE\s+VIRTUAL\b/i.test(s.sql))) {
    const r = tableRows(db, t.name);
    if (r.values.length > 0) rows.push(r);
  }
  const hasSequence = (db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'").pluck().get() as number) > 0;
  const sequence = hasSequence ? (db.prepare('SELECT name, seq FROM sqlite_sequence').raw().all() as unknown[][]) : [];
  const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
  const userVersion = db.pragma('user_version', { simple: true }) as number;
  return (target) => {
    for (const s of schema) target.exec(s.sql);
    target.transaction(() => {
      for (const r of rows) {
        const insert = target.prepare(r.insert);
        for (const v of r.values) insert.run(...v);
      }
      if (sequence.length > 0) {
        const insert = target.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)');
        for (const v of sequence) insert.run(...v);
      }
    })();
    if (foreignKeys) target.pragma('foreign_keys = ON');
    if (userVersion !== 0) target.pragma(`user_version = ${Math.trunc(userVersion)}`);
  };
}
