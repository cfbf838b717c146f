// An app that keeps its idempotency keys in a SQLite file of its own
// (better-sqlite3; knex, Kysely, Drizzle over it) keeps them outside the
// simulated store: the file is not emptied between runs, so a run's
// request was answered from an earlier run's keys. `check --app` failed
// this correct app (claim with INSERT OR IGNORE before any work) with "1
// op, 1 worker, 0 faults" and "no order exists" (until 2026-12). It is
// now one line naming the file, exit 2 (src/app/database-file.ts); an
// in-memory database (the process's own memory) and a read-only file run.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const fixture = 'src/app/fixtures/sqlite-keys-app.ts';
const args = (found: string) => ['check', '--app', fixture, '--runs', '40', '--faults', 'loseResponse,concurrency', '--found', found];

afterEach(() => {
  delete process.env.SQLITE_KEYS_DB;
  delete process.env.SQLITE_KEYS_READONLY;
});

describe('an app with a SQLite database of its own', () => {
  it('a database file: one line naming it, exit 2, no verdict (was a false "fails" from an earlier run\'s keys)', async () => {
    const dir = tmp('rs-sqlite-file-');
    process.env.SQLITE_KEYS_DB = join(dir, 'keys.db');
    const r = await runMain(args(join(dir, 'found')));
    expect(r.code, r.out).toBe(2);
    expect(r.err.split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^retrysim check: app 'sqlite-keys-app': POST \/orders: the app used the SQLite database file .*keys\.db \(better-sqlite3, .*\): a file outlives the simulated runs .*keep the app's state in env\.redis/);
    expect(r.out).not.toMatch(/fails/);
  }, 120_000);

  it('an in-memory database (the process\'s own memory) and a read-only file run as before: the correct app holds', async () => {
    const dir = tmp('rs-sqlite-mem-');
    process.env.SQLITE_KEYS_DB = ':memory:';
    const mem = await runMain(args(join(dir, 'found')));
    expect(mem.code, mem.err).toBe(0);
    expect(mem.out).toMatch(/│ ✓ │ sqlite-keys-app \/ one key per operation │ 40 .*│ holds/);
    const ref = join(dir, 'reference.db');
    new Database(ref).close();
    process.env.SQLITE_KEYS_DB = ref;
    process.env.SQLITE_KEYS_READONLY = '1';
    const ro = await runMain(args(join(dir, 'found')));
    expect(ro.code, ro.err).toBe(0);
  }, 120_000);
});
