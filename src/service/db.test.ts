import { describe, expect, it } from 'vitest';
import type { ServiceDefinition } from './definition.js';
import { releaseDatabase, simDatabase } from './db.js';

function service(name: string, ddl: string): ServiceDefinition {
  return {
    name,
    tables: ['items'],
    setup: (db) => db.exec(ddl),
    steps: ['write'],
    operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId }) },
    effects: { of: () => [] },
    handle: async () => ({ status: 200, body: '' }),
  };
}

/** Inserts two rows and returns the ids SQLite gave them. */
function insertTwo(def: ServiceDefinition): number[] {
  const d = simDatabase(def);
  try {
    const ins = d.db.prepare('INSERT INTO items (run) VALUES (?)');
    return [Number(ins.run('a').lastInsertRowid), Number(ins.run('b').lastInsertRowid)];
  } finally {
    releaseDatabase(d);
  }
}

describe('simDatabase: every run starts from the state setup left', () => {
  it('an AUTOINCREMENT table restarts its ids at 1 each run (its counter in sqlite_sequence is cleared too)', () => {
    const def = service('autoinc', 'CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, run TEXT)');
    expect(insertTwo(def)).toEqual([1, 2]);
    expect(insertTwo(def)).toEqual([1, 2]);
  });

  it('a plain rowid table restarts its ids at 1 each run', () => {
    const def = service('rowid', 'CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT)');
    expect(insertTwo(def)).toEqual([1, 2]);
    expect(insertTwo(def)).toEqual([1, 2]);
  });
});

describe('an async setup', () => {
  it('opened without being awaited first is named as such, not as tables it "did not create" (loadService and runServiceCase await it: src/service/async-setup.test.ts)', () => {
    const def: ServiceDefinition = {
      ...service('async-setup', ''),
      // A query builder's schema calls awaited: the tables would appear a tick later.
      setup: (async (db: { exec(sql: string): unknown }) => {
        await Promise.resolve();
        db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT)');
      }) as unknown as ServiceDefinition['setup'],
    };
    expect(() => simDatabase(def)).toThrow(/^service 'async-setup': setup is async and was not awaited before its database was opened/);
  });
});
