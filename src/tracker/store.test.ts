import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from './store.js';
import { scopeKey, unscopeKey } from './scope.js';
import { canonicalJson, fingerprint } from './fingerprint.js';

const report = { run_id: 'r1', module: 'm', title: 't', steps: 's' };

describe('store', () => {
  let store: Store | undefined;
  afterEach(() => store?.close());

  it('creates the SPEC schema', () => {
    store = openStore();
    const cols = (t: string) => (store!.db.prepare(`PRAGMA table_info(${t})`).all() as { name: string }[]).map((c) => c.name);
    expect(cols('reports')).toEqual(['id', 'run_id', 'tenant', 'module', 'title', 'steps', 'idem_key', 'created_at']);
    expect(cols('idempotency_keys')).toEqual([
      'key', 'fingerprint', 'status', 'locked_at', 'response_code', 'response_body', 'fence',
    ]);
  });

  it('counts reports by run and title, and reset() empties the tables with ids restarting at 1', () => {
    store = openStore();
    expect(store.insertReport(report, null, 1)).toBe(1);
    store.insertReport({ ...report, title: 'u' }, null, 2);
    store.insertReport({ ...report, run_id: 'r2' }, null, 3);
    store.insertPlaceholder('k', 'fp', 0, 1);
    expect(store.countReports()).toBe(3);
    expect(store.countReports({ runId: 'r1' })).toBe(2);
    expect(store.countReports({ title: 't' })).toBe(2);
    expect(store.countReports({ runId: 'r1', title: 'u' })).toBe(1);
    expect(store.reportsForRun('r1').map((r) => r.id)).toEqual([1, 2]);
    expect(store.keyRows()).toHaveLength(1);
    store.reset();
    expect(store.allReports()).toEqual([]);
    expect(store.keyRows()).toEqual([]);
    expect(store.insertReport(report, null, 4)).toBe(1);
  });

  it('works on a file in WAL mode, and a second connection sees committed data', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tracker-'));
    try {
      store = openStore(join(dir, 't.db'));
      expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
      store.insertReport(report, null, 1);
      const other = openStore(join(dir, 't.db'));
      expect(other.countReports()).toBe(1);
      other.close();
    } finally {
      store?.close();
      store = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fenced finish touches only the row holding that fence; unfenced touches any', () => {
    store = openStore();
    store.insertPlaceholder('k', 'fp', 0, 2);
    expect(store.finishKey('k', 201, '{}', 1)).toBe(0);
    expect(store.finishKey('k', 201, '{}', 2)).toBe(1);
    expect(store.finishKey('k', 201, '{}', 2)).toBe(0); // already done
    expect(store.finishKey('k', 201, '{}', null)).toBe(1);
  });
});

describe('fingerprint and scope', () => {
  it('canonical JSON ignores key order and whitespace', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] })).toBe('{"a":[{"c":3,"d":2}],"b":1}');
    expect(fingerprint(JSON.parse('{ "title": "x", "run_id": "r" }'))).toBe(fingerprint({ run_id: 'r', title: 'x' }));
    expect(fingerprint({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
  });

  it('scoped keys cannot collide by concatenation', () => {
    expect(scopeKey('a', 'POST', 'x/y')).not.toBe(scopeKey('a/x', 'POST', 'y'));
    expect(scopeKey('a', 'POST', '","POST","b')).not.toBe(scopeKey('a', 'POST', 'b'));
    expect(unscopeKey(scopeKey('t/1', 'POST', 'k"/'))).toEqual({ tenant: 't/1', method: 'POST', key: 'k"/' });
    expect(unscopeKey('nope')).toBeUndefined();
  });
});
