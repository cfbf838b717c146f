import Database from 'better-sqlite3';
import { describeThrow, ServiceError } from './errors.js';
import type { ServiceDb, ServiceDefinition } from './definition.js';
import { checkTables, tablesOf } from './validate.js';
import { simulatedSqlClock } from './sql-clock.js';
import { abandon, isThenable } from '../sim/thenable.js';
import { isAsyncSetup, rebuiltSetup, tableRows } from './async-setup.js';

/**
 * A service's database for simulation: one in-memory connection per
 * definition, set up once and emptied between runs (reopening SQLite and
 * re-running the user's setup per scenario would cost more than the run).
 */
export class ServiceDatabase {
  readonly db: ServiceDb;
  private readonly clears: Array<() => void>;
  private readonly schemaVersion: () => number;
  private readonly totalChanges: () => number;
  private version: number;
  /** A run is using it now (a second run at the same time gets a database of its own). */
  busy = false;

  /**
   * @param at a path (`:memory:` for simulation), or a connection to a real
   *   database file that real mode opened: on a file, `setup` runs only when
   *   none of the declared tables exist yet — the data of a previous process
   *   is the point of a file, and setup is documented to run once per database.
   */
  constructor(
    readonly def: ServiceDefinition,
    at: string | ServiceDb = ':memory:',
  ) {
    this.db = typeof at === 'string' ? new Database(at) : at;
    if (typeof at === 'string' && at !== ':memory:') this.db.pragma('journal_mode = WAL');
    const existing = typeof at === 'string' ? [] : tablesOf(this.db);
    const fresh = !def.tables.some((t) => existing.includes(t));
    const context = `the database file ${this.db.name}`;
    if (fresh && existing.length > 0) {
      // Another schema's file: refuse before setup adds tables to it.
      this.db.close();
      throw new ServiceError(def.name, `${context} holds tables [${existing.join(', ')}], but the service declares [${def.tables.join(', ')}]; use a fresh --db file for this service`);
    }
    if (fresh) {
      let made: unknown;
      try {
        // An `async setup`, awaited once at load (async-setup.ts), is rebuilt here from what it made.
        const rebuilt = rebuiltSetup(def);
        made = rebuilt !== undefined ? rebuilt(this.db) : def.setup(this.db);
      } catch (e) {
        this.db.close();
        throw new ServiceError(def.name, `setup threw ${describeThrow(e)}`);
      }
      // An `async setup` (a query builder's schema calls awaited) made its tables after this line, if ever:
      // "declares table(s) … that setup did not create" sent its author looking at the table names.
      if (isThenable(made)) {
        abandon(made);
        this.db.close();
        throw new ServiceError(def.name, isAsyncSetup(def.setup)
          ? 'setup is async and was not awaited before its database was opened: load the module with a retrysim command, or run it through runServiceCase (retrysim/vitest), which await it once'
          : "setup returned a Promise from a function not declared async: declare it `async setup(db) { … }` (awaited once, when the module loads, its database rebuilt from what it made) or create the tables synchronously with db.exec('CREATE TABLE …')");
      }
    }
    try {
      checkTables(def, this.db, fresh ? undefined : context);
    } catch (e) {
      this.db.close();
      throw e;
    }
    // Simulation only: SQL's 'now' reads the simulated clock (a file is real mode's, which keeps SQLite's).
    if (at === ':memory:') simulatedSqlClock(this.db);
    this.clears = def.tables.map((t) => {
      const st = this.db.prepare(`DELETE FROM "${t.replaceAll('"', '""')}"`);
      return () => void st.run();
    });
    // AUTOINCREMENT tables keep their counters in sqlite_sequence; ids
    // restart where setup left them per run. It exists from setup on or never: a table created
    // later is refused (checkSchema), so this is asked once, not per run.
    const sequence = (this.db.prepare("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'").pluck().get() as number) > 0;
    if (sequence) {
      const clearSequence = this.db.prepare('DELETE FROM sqlite_sequence');
      this.clears.push(() => void clearSequence.run());
    }
    // The rows setup inserted (reference data: accounts, prices, a flag) are where every run starts, as in
    // production, where setup ran once on the database: emptied, a handler reading them found nothing (until
    // 2026-12). Restored after the deletes; a schema whose setup inserts nothing (the usual case) only deletes.
    if (at === ':memory:') this.restore = seedRestorer(this.db, def.tables, sequence);
    const sv = this.db.prepare('PRAGMA schema_version').pluck();
    this.schemaVersion = () => sv.get() as number;
    const tc = this.db.prepare('SELECT total_changes()').pluck();
    this.totalChanges = () => tc.get() as number;
    this.version = this.schemaVersion();
  }

  /** Rows written by this connection so far (committed or not): a request that moved it wrote something. */
  changes(): number {
    return this.totalChanges();
  }

  /** Puts back the rows setup left, after the deletes; undefined when setup left none. */
  private readonly restore: (() => void) | undefined;

  /** Empties every declared table and puts back the rows setup left, so the next run starts from the state setup left. */
  reset(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK'); // a run stopped inside a transaction (a kill)
    if (this.restore === undefined) {
      for (const c of this.clears) c();
      return;
    }
    // One transaction, foreign keys checked at its end: tables are declared in any order, parents and children alike.
    this.db.exec('BEGIN');
    try {
      this.db.pragma('defer_foreign_keys = ON');
      for (const c of this.clears) c();
      this.restore();
      this.db.exec('COMMIT');
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
  }

  /**
   * After a request: if the schema changed (a CREATE at run time), refuse
   * tables that were not declared, naming the request that made them.
   */
  checkSchema(request: string, def: ServiceDefinition = this.def): void {
    const v = this.schemaVersion();
    if (v === this.version) return;
    this.version = v;
    const extra = tablesOf(this.db).filter((t) => !def.tables.includes(t));
    if (extra.length > 0) {
      throw new ServiceError(def.name, `writes outside its declared tables: request ${request} created ${extra.map((t) => `'${t}'`).join(', ')}, not in tables [${def.tables.join(', ')}]`);
    }
  }

  close(): void {
    this.db.close();
  }
}

/**
 * The rows `setup` left in the declared tables (and the AUTOINCREMENT
 * counters), as a function that inserts them again into emptied tables;
 * undefined when it left none. Generated columns are computed again, not
 * inserted; a rowid table without an INTEGER PRIMARY KEY keeps its rowids.
 */
function seedRestorer(db: ServiceDb, tables: readonly string[], sequence: boolean): (() => void) | undefined {
  const restores: Array<() => void> = [];
  for (const t of tables) {
    const { insert: sql, values: rows } = tableRows(db, t);
    if (rows.length === 0) continue;
    const insert = db.prepare(sql);
    restores.push(() => {
      for (const r of rows) insert.run(...r);
    });
  }
  if (sequence) {
    const seq = db.prepare('SELECT name, seq FROM sqlite_sequence').raw().all() as unknown[][];
    if (seq.length > 0 && restores.length > 0) {
      const insert = db.prepare('INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)');
      restores.push(() => {
        for (const r of seq) insert.run(...r);
      });
    }
  }
  if (restores.length === 0) return undefined;
  return () => {
    for (const r of restores) r();
  };
}

/**
 * Cached databases by schema: the setup function and the declared tables.
 * Definitions that share both (the built-in tracker's variants, one per
 * lease and variant) share one connection.
 */
const cache = new WeakMap<ServiceDefinition['setup'], Map<string, ServiceDatabase>>();

/**
 * The cached in-memory database of a definition's schema, emptied and ready
 * for a run, and marked busy until {@link releaseDatabase}. When it is busy
 * (two runs interleaved in one thread), the caller gets a fresh one that
 * release closes.
 */
export function simDatabase(def: ServiceDefinition): ServiceDatabase {
  let bySchema = cache.get(def.setup);
  if (bySchema === undefined) cache.set(def.setup, (bySchema = new Map()));
  const key = def.tables.join('\0');
  let d = bySchema.get(key);
  if (d === undefined) bySchema.set(key, (d = new ServiceDatabase(def)));
  else if (d.busy) d = new ServiceDatabase(def);
  d.reset();
  d.busy = true;
  return d;
}

/** Ends a run's use of a database from {@link simDatabase}. */
export function releaseDatabase(d: ServiceDatabase): void {
  d.busy = false;
  const cached = cache.get(d.def.setup)?.get(d.def.tables.join('\0'));
  if (cached !== d) d.close();
}
