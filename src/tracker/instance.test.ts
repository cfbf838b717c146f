import { describe, expect, it } from 'vitest';
import { TrackerInstance } from './instance.js';
import { leaseProblem } from './lease.js';
import { openStore } from './store.js';
import { json, post, TestEnv } from './test-env.js';

describe('lease configuration', () => {
  it('rejects a lease that does not exceed client timeout + processing, naming the numbers', () => {
    const store = openStore();
    const build = () => new TrackerInstance({ variant: 'key_atomic', db: store, leaseMs: 500, faults: { slowMs: 800 } });
    expect(build).toThrow(
      'tracker (key_atomic): lease 500 ms must exceed client timeout 2000 ms + longest processing 800 ms = 2800 ms',
    );
    expect(build).toThrow(/allowUnsafeLease/);
    expect(
      () => new TrackerInstance({ variant: 'key_atomic_nofence', db: store, leaseMs: 2800, maxProcessingMs: 800 }),
    ).toThrow(/2800 ms must exceed/);
  });

  it('accepts the defaults and a safe lease, and builds an unsafe one only when asked', () => {
    const store = openStore();
    expect(() => new TrackerInstance({ variant: 'key_atomic', db: store })).not.toThrow();
    expect(leaseProblem({ leaseMs: 5000, clientTimeoutMs: 2000, processingMs: 2999 })).toBeNull();
    const unsafe = new TrackerInstance({
      variant: 'key_atomic', db: store, leaseMs: 500, faults: { slowMs: 800 }, allowUnsafeLease: true,
    });
    expect(unsafe.leaseMs).toBe(500);
  });

  it('does not apply to variants without a lease', () => {
    const store = openStore();
    expect(() => new TrackerInstance({ variant: 'naive', db: store, leaseMs: 1, faults: { slowMs: 800 } })).not.toThrow();
  });
});

describe('routes', () => {
  const store = openStore();
  const inst = new TrackerInstance({ variant: 'key_atomic', db: store });
  const get = (path: string, method = 'GET') => inst.handle({ method, path, headers: {}, body: '' }, new TestEnv());

  it('GET /reports/:id returns the report; 404 when absent; 400 for a bad id', async () => {
    await post(inst, new TestEnv(), { key: 'k' });
    const res = await get('/reports/1');
    expect(res.status).toBe(200);
    expect(json(res)).toMatchObject({ report_id: 1, run_id: 'run-1', module: 'auth', title: 'login fails' });
    expect((await get('/reports/99')).status).toBe(404);
    expect((await get('/reports/abc')).status).toBe(400);
  });

  it('GET /reports?run_id= lists the run’s reports (query before resubmitting)', async () => {
    const res = await get('/reports?run_id=run-1');
    expect(res.status).toBe(200);
    expect((json(res).reports as unknown[]).length).toBe(1);
    expect(json(await get('/reports?run_id=other'))).toEqual({ reports: [] });
    expect((await get('/reports')).status).toBe(400);
  });

  it("reads are tenant-scoped: another tenant's report is not found, by id or by run", async () => {
    const other = (path: string) => inst.handle({ method: 'GET', path, headers: { 'x-tenant': 'globex' }, body: '' }, new TestEnv());
    expect((await get('/reports/1')).status).toBe(200);
    const byId = await other('/reports/1');
    expect(byId.status).toBe(404);
    expect(json(byId).error).toBe('report 1 not found');
    expect(json(await other('/reports?run_id=run-1'))).toEqual({ reports: [] });
    expect((await inst.handle({ method: 'GET', path: '/reports/1', headers: { 'x-tenant': '' }, body: '' }, new TestEnv())).status).toBe(400);
  });

  it('a malformed percent-escape in a report id is a 400, not a crash', async () => {
    expect((await get('/reports/%E0%A4%A')).status).toBe(400);
  });

  it('unknown paths → 404, wrong methods → 405 with Allow, all as JSON errors', async () => {
    const nf = await get('/nope');
    expect(nf.status).toBe(404);
    expect(json(nf).error).toContain('/nope');
    const na = await get('/reports', 'DELETE');
    expect(na.status).toBe(405);
    expect(na.headers.allow).toBe('GET, POST');
    expect((await get('/reports/1', 'PUT')).status).toBe(405);
  });

  it('accepts header names in any case', async () => {
    const res = await inst.handle(
      { method: 'post', path: '/reports', headers: { 'Idempotency-Key': 'k', 'Content-Type': 'application/json' }, body: JSON.stringify({ run_id: 'run-1', module: 'auth', title: 'login fails', steps: '1. open\n2. click' }) },
      new TestEnv(),
    );
    expect(res.replay).toBe(true);
  });
});
