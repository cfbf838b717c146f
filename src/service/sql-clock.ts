import Database from 'better-sqlite3';
import type { ServiceDb } from './definition.js';
import { simulatedWallNow } from '../sim/fake-timers.js';

/**
 * SQLite's own clock on simulated time. A service that writes
 * `DEFAULT CURRENT_TIMESTAMP`, `WHERE expires_at > unixepoch()` or
 * `datetime('now', '-30 seconds')` reads the time inside SQLite, which asks
 * the operating system: in a simulated run that was the real clock, so a
 * TTL kept in SQL never expired in virtual time (and a replay read other
 * values than its first run). On the simulation's databases the date and
 * time functions are overridden (SQLite lets an application function of the
 * same name replace a built-in): `'now'` — given, or implied by a missing
 * time value — becomes the simulated wall clock (the running request's
 * `Date.now()`, with its instance's skew), and the rest is SQLite's own
 * function, evaluated on a side connection so every modifier and format
 * behaves exactly as documented. Real mode (`serve`, a `--db` file) keeps
 * SQLite's clock.
 */

/** Each function and the position of its time value (strftime's first argument is the format). */
const FUNCTIONS: ReadonlyArray<[name: string, timeArg: number]> = [
  ['date', 0],
  ['time', 0],
  ['datetime', 0],
  ['julianday', 0],
  ['unixepoch', 0],
  ['strftime', 1],
];

/** The keyword forms (CURRENT_TIMESTAMP, …) are functions of no arguments with these formats. */
const KEYWORDS: ReadonlyArray<[name: string, fn: string]> = [
  ['current_timestamp', 'datetime'],
  ['current_date', 'date'],
  ['current_time', 'time'],
];

let side: Database.Database | undefined;
const statements = new Map<string, Database.Statement>();

/** SQLite's built-in `fn` on the side connection, with `args` as given. */
function builtin(fn: string, args: unknown[]): unknown {
  side ??= new Database(':memory:');
  const k = `${fn}/${args.length}`;
  let st = statements.get(k);
  if (st === undefined) statements.set(k, (st = side.prepare(`SELECT ${fn}(${args.map(() => '?').join(', ')})`).pluck()));
  return st.get(...args);
}

/** The simulated instant as a time value SQLite reads to the millisecond (ISO 8601 in UTC, as 'now' is). */
function instant(ms: number): string {
  return new Date(ms).toISOString(); // real-time: allowed (formats a given simulated instant; reads no clock)
}

/** `args` with `'now'` (or the missing time value) at `at` replaced by the simulated instant, when there is one. */
function withNow(args: unknown[], at: number): unknown[] {
  const now = simulatedWallNow();
  if (now === undefined) return args;
  if (args.length <= at) return [...args, instant(now)];
  const v = typeof args[at] === 'string' ? (args[at] as string).trim().toLowerCase() : undefined;
  if (v === 'now') return [...args.slice(0, at), instant(now), ...args.slice(at + 1)];
  // Since SQLite 3.42 a time value of 'subsec' means "now, to the millisecond".
  if (v === 'subsec' || v === 'subsecond') return [...args.slice(0, at), instant(now), 'subsec', ...args.slice(at + 1)];
  return args;
}

/** Puts `db`'s date and time functions on the simulated clock (see the file's comment). */
export function simulatedSqlClock(db: ServiceDb): void {
  for (const [name, at] of FUNCTIONS) {
    db.function(name, { varargs: true, deterministic: false }, (...args: unknown[]) => builtin(name, withNow(args, at)) as never);
  }
  for (const [name, fn] of KEYWORDS) {
    db.function(name, { deterministic: false }, () => builtin(fn, withNow([], 0)) as never);
  }
}
