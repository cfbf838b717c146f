// An `async setup` (a query builder's schema calls awaited) is awaited once
// when the module loads, or on runServiceCase's first case, and its database
// rebuilt from what it made on every connection. Until 2026-12 it was
// refused in one line ("setup returned a Promise").
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCliProcess, runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { serviceCases, runServiceCase } from '../vitest.js';
import fc from 'fast-check';
import service from './fixtures/async-setup-orders.js';
import { awaitAsyncSetup } from './async-setup.js';
import { ServiceDatabase } from './db.js';
import type { ServiceDefinition } from './definition.js';

const tmp = tempDirs();
const FIXTURE = 'src/service/fixtures/async-setup-orders.ts';

describe('an async setup', () => {
  it('check --service: its tables, seed rows, AUTOINCREMENT, index and pragmas are there on every run; a correct service holds', async () => {
    const r = await runMain(['check', '--service', FIXTURE, '--runs', '200', '--json', '--found', tmp('rs-async-setup-')]);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ verdict: 'holds', runs: 200 });
  });

  it('the rebuilt database is the one setup made: schema in order, rows, sqlite_sequence, foreign_keys and user_version', async () => {
    const def = { ...service, name: 'async-setup-copy', setup: async (db: Database.Database) => service.setup(db) } as unknown as ServiceDefinition;
    await awaitAsyncSetup(def);
    const file = join(tmp('rs-async-setup-db-'), 'orders.db');
    const raw = new Database(file);
    const sdb = new ServiceDatabase(def, raw);
    expect(raw.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY rowid").pluck().all()).toEqual(['prices', 'orders', 'orders_ref', 'idem']);
    expect(raw.prepare('SELECT sku, cents FROM prices ORDER BY sku').raw().all()).toEqual([['gadget', 990], ['widget', 1250]]);
    expect(raw.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(raw.pragma('user_version', { simple: true })).toBe(3);
    // The foreign key holds: an order of an unknown sku is refused.
    expect(() => raw.prepare("INSERT INTO orders (ref, tenant, sku, cents) VALUES ('r', 't', 'nope', 1)").run()).toThrow(/FOREIGN KEY/);
    sdb.db.close();
  });

  it('runServiceCase (retrysim/vitest) awaits it on its first case: a property over the imported definition passes', async () => {
    await fc.assert(fc.asyncProperty(serviceCases(service), async (c) => {
      expect((await runServiceCase(service, c)).violations).toEqual([]);
    }), { numRuns: 30, seed: 1 });
  });

  it('a rejecting async setup is one line, exit 2', async () => {
    const dir = tmp('rs-async-setup-bad-');
    const file = join(dir, 'rejects.mjs');
    writeFileSync(file, `export default { name: 'rejects', tables: ['t'], async setup(db) { await null; db.exec('CREATE TABLE t (x)'); throw new Error('migration 2 failed'); }, steps: ['s'], operation: { path: '/t', body: () => '{}' }, effects: { of: () => [] }, async handle() { return { status: 200, body: '{}' }; } };\n`);
    const r = await runMain(['check', '--service', file, '--runs', '5']);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(/^retrysim check: service 'rejects': setup threw Error: migration 2 failed \(at Object\.setup \(.*rejects\.mjs:1:\d+\)\)$/m);
  });

  it('one that never settles is one line, exit 2 (Node exited with code 13 and not a word)', () => {
    const file = join(tmp('rs-async-setup-never-'), 'never.mjs');
    writeFileSync(file, `export default { name: 'never', tables: ['t'], async setup(db) { db.exec('CREATE TABLE t (x)'); await new Promise(() => {}); }, steps: ['s'], operation: { path: '/t', body: () => '{}' }, effects: { of: () => [] }, async handle() { return { status: 200, body: '{}' }; } };\n`);
    const r = runCliProcess(['check', '--service', file, '--runs', '5']);
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe("retrysim check: service 'never': setup never settled: its promise was still pending with nothing left for it to wait on (no timer, no I/O) — it awaits something that never resolves");
  });

  it('a plain function returning a Promise is told to be declared async; an async setup never awaited (a database opened by hand) is named', async () => {
    const plain = { ...service, name: 'plain-promise', setup: (db: Database.Database) => Promise.resolve().then(() => db.exec('CREATE TABLE prices (x)')) } as unknown as ServiceDefinition;
    expect(() => new ServiceDatabase(plain)).toThrow(/setup returned a Promise from a function not declared async: declare it `async setup\(db\) \{ … \}`/);
    const unawaited = { ...service, name: 'unawaited', setup: async () => {} } as unknown as ServiceDefinition;
    expect(() => new ServiceDatabase(unawaited)).toThrow(/setup is async and was not awaited before its database was opened/);
  });
});
