import Database from 'better-sqlite3';
import { noteRefusal } from './refusals.js';

/**
 * A hosted app's state lives in the simulated store (`env.redis`): shared by
 * the instances, kept across kills, emptied between runs, reached by the
 * faults. An app that keeps its idempotency keys in a SQLite *file* of its
 * own (better-sqlite3, directly or under knex, Kysely or Drizzle) keeps them
 * outside all of that: the file outlives every run and every campaign, so
 * a run's request finds the keys an earlier run stored and is answered
 * from them. `check --app` then "failed" a correct app with 1 operation, 1
 * worker and no fault (`the client was told it succeeded, but no order
 * exists`, the id a replay of an earlier run's), and shrank a real failure
 * to a counterexample that did not fail on a fresh file (until 2026-12).
 *
 * While a simulated instance is entered, a statement on a database that is
 * neither in memory nor read-only is refused: the host names the file in
 * one line (exit 2), whatever the app does with the exception. An
 * in-memory database (`:memory:`) is the process's own memory and runs as
 * such; a read-only one (reference data) changes nothing between runs.
 * Real mode (`serve`) does not install this: there the file is the point.
 *
 * Only better-sqlite3's native addon that retrysim itself loads is watched:
 * a second copy of the addon (another version of the package, nested under
 * the app's dependencies) is not.
 */
export class AppDatabaseFileError extends Error {
  constructor(readonly file: string) {
    super(`retrysim: the app used the SQLite database file ${file}, whose state outlives the simulated runs; keep the app's state in env.redis`);
    this.name = 'AppDatabaseFileError';
  }
}

/** The one line the host reports (after `app 'X' <where>: `). */
export function databaseFileText(file: string): string {
  return `the app used the SQLite database file ${file} (better-sqlite3, or knex, Kysely or Drizzle over it): a file outlives the simulated runs — it is not emptied between runs, the faults never reach it, and every instance and campaign shares it — so a run's requests would be answered from what earlier runs stored; keep the app's state in env.redis (the simulated store), use an in-memory database (':memory:', the process's own memory), or write the endpoint as a ServiceDefinition on sim.db (docs/services.md)`;
}

interface NativeDb {
  readonly memory: boolean;
  readonly readonly: boolean;
  readonly name: string;
}

function refuseFile(db: NativeDb | undefined, from: (...a: never[]) => unknown): void {
  if (db === undefined || db.memory || db.readonly) return;
  noteRefusal(databaseFileText(db.name));
  const e = new AppDatabaseFileError(db.name);
  // The stack starts at the app's call (its file and line), not here.
  Error.captureStackTrace(e, from);
  throw e;
}

type Swap = [object, PropertyKey, unknown];
let swaps: Swap[] | undefined;

/**
 * The replacements, while a simulated instance is entered, of the native
 * `Database.prototype.prepare`/`exec` (every query of knex, Kysely and
 * Drizzle prepares a statement) and `Statement.prototype.run`/`get`/`all`/
 * `iterate` (a statement prepared at module level, before any run).
 */
export function databaseFileSwaps(): Swap[] {
  if (swaps !== undefined) return swaps;
  const probe = new Database(':memory:');
  const native = (probe as unknown as Record<symbol, object>)[Object.getOwnPropertySymbols(probe)[0]!]!;
  const dbProto = Object.getPrototypeOf(native) as Record<string, (...a: unknown[]) => unknown>;
  const stmtProto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  probe.close();
  const list: Swap[] = [];
  for (const m of ['prepare', 'exec']) {
    const real = dbProto[m]!;
    const guarded = function (this: NativeDb, ...a: unknown[]): unknown {
      refuseFile(this, guarded);
      return real.apply(this, a);
    };
    list.push([dbProto, m, guarded]);
  }
  for (const m of ['run', 'get', 'all', 'iterate']) {
    const real = stmtProto[m]!;
    const guarded = function (this: { database?: NativeDb }, ...a: unknown[]): unknown {
      refuseFile(this.database, guarded);
      return real.apply(this, a);
    };
    list.push([stmtProto, m, guarded]);
  }
  swaps = list;
  return list;
}
