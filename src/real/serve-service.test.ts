import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, ServerProcess } from './child.js';
import { httpJson, httpSend } from './http-transport.js';
import { tempDirs } from '../testing/temp-dirs.js';

// `retrysim serve --service PATH`: a user's ServiceDefinition over real HTTP
// on a SQLite file, hosted by the same ServiceHost the simulation uses.

const tmp = tempDirs();
const live: ServerProcess[] = [];
afterAll(async () => {
  for (const s of live) await s.stop();
});

const JSONH = { 'content-type': 'application/json' };

async function post(port: number, path: string, body: string, headers: Record<string, string> = {}) {
  const o = await httpSend(port, { method: 'POST', path, headers: { ...JSONH, ...headers }, body }, 10_000);
  if (o.kind !== 'response') throw new Error(`POST ${path}: ${o.reason}`);
  return { status: o.status, headers: o.headers, json: JSON.parse(o.body) as Record<string, unknown> };
}

function started(opts: ConstructorParameters<typeof ServerProcess>[0]): ServerProcess {
  const s = new ServerProcess(opts);
  live.push(s);
  return s;
}

describe('retrysim serve --service: a user service for real', () => {
  it('payments-atomic: 201, a keyed retry replays, a reused key with another body is 422, a bad body is 400; after kill -9 the file still holds the payment and replays it', async () => {
    const dbPath = join(tmp('rs-serve-svc-'), 'pay.db');
    const s = started({ module: 'examples/payments-atomic/service.ts', dbPath });
    const port = await s.start();
    expect(s.output).toMatch(/service payments-atomic \(examples\/payments-atomic\/service\.ts\)/);
    const body = JSON.stringify({ order_id: 'o1', item: 'book', amount_cents: 1999 });
    const a = await post(port, '/payments', body, { 'idempotency-key': 'k1' });
    expect(a.status).toBe(201);
    expect(a.headers['x-instance']).toBe('payments-atomic');
    const b = await post(port, '/payments', body, { 'idempotency-key': 'k1' });
    expect(b).toMatchObject({ status: 201, json: a.json });
    expect(b.headers['idempotent-replay']).toBe('true');
    expect((await post(port, '/payments', body.replace('book', 'pen'), { 'idempotency-key': 'k1' })).status).toBe(422);
    const bad = await post(port, '/payments', '{"order_id": ', { 'idempotency-key': 'k2' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).not.toMatch(/\bat \S+:\d+/); // no stack trace in an answer
    await s.kill();
    await s.start();
    const c = await post(s.port, '/payments', body, { 'idempotency-key': 'k1' });
    expect(c).toMatchObject({ status: 201, json: a.json });
    const reader = new Database(dbPath, { readonly: true });
    try {
      expect(reader.prepare('SELECT count(*) FROM payments').pluck().get()).toBe(1);
    } finally {
      reader.close();
    }
  });

  it('sim.now() is the wall clock and sim.sleep a real timer; memory() is lost on restart, the table is not; admin counts come from the service\'s declarations', async () => {
    const s = started({ module: 'src/real/fixtures/memory-and-clock.ts', dbPath: join(tmp('rs-serve-mem-'), 'm.db') });
    const port = await s.start();
    const before = Date.now();
    const made = await post(port, '/items', JSON.stringify({ run: 'r1' }));
    expect(made.status).toBe(201);
    expect(made.json.sleptMs).toBeGreaterThanOrEqual(25); // a real 30 ms timer (timers may fire a ms early)
    const st = (await httpJson(port, 'GET', '/state')).json as { now: number; served: number; items: number };
    expect(st.now).toBeGreaterThanOrEqual(before);
    expect(st.now).toBeLessThanOrEqual(Date.now());
    expect(st).toMatchObject({ served: 2, items: 1 });
    expect((await httpJson(port, 'GET', '/_admin/counts')).json).toMatchObject({ effects: 1, rows: { items: 1 } });
    await s.kill();
    await s.start();
    expect((await httpJson(s.port, 'GET', '/state')).json).toMatchObject({ served: 1, items: 1 });
  });

  it('faults armed through the admin route reach the service: a crash at its declared crash point answers 500 and writes nothing; an undeclared label is refused', async () => {
    const s = started({ module: 'src/real/fixtures/memory-and-clock.ts', dbPath: join(tmp('rs-serve-crash-'), 'c.db') });
    const port = await s.start();
    await s.setFaults({ crashMidRequest: 1, crashAt: 'before-write' });
    const crashed = await post(port, '/items', JSON.stringify({ run: 'r1' }));
    expect(crashed.status).toBe(500);
    expect(String(crashed.json.error)).toMatch(/before-write/);
    expect((await post(port, '/items', JSON.stringify({ run: 'r1' }))).status).toBe(201);
    expect((await httpJson(port, 'GET', '/_admin/counts')).json).toMatchObject({ effects: 1 });
    const refused = await httpJson(port, 'POST', '/_admin/faults', { pause: { atStep: 'nope', ms: 10, count: 1 } });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.json)).toMatch(/pause\.atStep 'nope' is not declared by service 'memory-and-clock' \(declared: write\)/);
    // The slow fault's later reach (faults.slowAtStepNth of a scenario) is armed as the others are; a reach of 0 is refused.
    const slow = await httpJson(port, 'POST', '/_admin/faults', { slowAtStep: 'write', slowAtStepNth: 2 });
    expect(slow.json).toMatchObject({ slowAtStep: 'write', slowAtStepNth: 2 });
    expect((await httpJson(port, 'POST', '/_admin/faults', { slowAtStepNth: 0 })).status).toBe(400);
    // killAtStep at a declared step: the process SIGKILLs itself mid-request; the client sees the connection close.
    await s.setFaults({ killAtStep: 'write' });
    const o = await httpSend(port, { method: 'POST', path: '/items', headers: JSONH, body: JSON.stringify({ run: 'r2' }) }, 10_000);
    expect(o).toMatchObject({ kind: 'transport_error' });
    expect(await s.exited()).toMatchObject({ signal: 'SIGKILL' });
  });

  it('a handler that throws answers 500 and is named on stderr in one line; the server serves on', async () => {
    const s = started({ module: 'src/real/fixtures/throws.ts', dbPath: join(tmp('rs-serve-throw-'), 't.db') });
    const port = await s.start();
    const r = await post(port, '/items', JSON.stringify({ run: 'r1' }));
    expect(r.status).toBe(500);
    // The body names the exception only: where (a file, a line) goes to stderr, never to a client.
    expect(String(r.json.error)).toMatch(/^internal error: TypeError: .*reading 'id'\)$/);
    expect(String(r.json.error)).not.toMatch(/\.ts|\//);
    const again = await post(port, '/items', JSON.stringify({ run: 'r1' }));
    expect(again.status).toBe(500);
    const line = /retrysim serve: service 'throws': handle threw/;
    expect(await s.outputMatching(line)).toMatch(/retrysim serve: service 'throws': handle threw TypeError: Cannot read properties of undefined \(reading 'id'\) \(at [^\n]*throws|broken\.ts:\d+:\d+\)/);
    expect(s.output).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('a broken or missing module, a setup that throws, a file of another schema: one line, exit 2; tracker-only flags are refused with --service', async () => {
    const dir = tmp('rs-serve-bad-');
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY)');
    db.close();
    const notAService = join(dir, 'not-a-service.mjs');
    writeFileSync(notAService, 'export default { name: "x" };\n');
    const [missing, setup, schema, shape, lease, both] = await Promise.all([
      runCli(['serve', '--service', join(dir, 'nope.ts'), '--db', join(dir, 'a.db')]),
      runCli(['serve', '--service', 'src/real/fixtures/setup-throws.ts', '--db', join(dir, 'b.db')]),
      runCli(['serve', '--service', 'examples/payments-atomic/service.ts', '--db', other]),
      runCli(['serve', '--service', notAService, '--db', join(dir, 'c.db')]),
      runCli(['serve', '--service', 'examples/payments-atomic/service.ts', '--db', join(dir, 'd.db'), '--lease-ms', '9000']),
      runCli(['serve', '--service', 'examples/payments-atomic/service.ts', '--variant', 'naive', '--db', join(dir, 'e.db')]),
    ]);
    for (const r of [missing, setup, schema, shape, lease, both]) {
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr.trim().split('\n')[0]).toMatch(/^retrysim serve: /);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(missing.stderr).toMatch(/cannot load: no such file/);
    expect(setup.stderr.trim()).toMatch(/^retrysim serve: service 'setup-throws': setup threw SqliteError: near "TABEL": syntax error/);
    expect(schema.stderr).toMatch(/the database file .*other\.db holds tables \[orders\], but the service declares \[payments, idempotency_keys\]; use a fresh --db file/);
    expect(shape.stderr).toMatch(/tables: /);
    expect(lease.stderr).toMatch(/--lease-ms configures the built-in tracker/);
    expect(both.stderr).toMatch(/not both/);
  });
});
