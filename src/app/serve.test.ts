// The same hosted app for real: `retrysim serve --app` on a loopback port
// and a SQLite file (the store survives the process), the app's clock the
// wall clock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ServerProcess } from '../real/child.js';
import { httpSend } from '../real/http-transport.js';

const dir = mkdtempSync(join(tmpdir(), 'retrysim-serve-app-'));
const live: ServerProcess[] = [];

afterAll(async () => {
  for (const s of live) await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('retrysim serve --app', () => {
  it('serves the app on a real port: a retry with the same key is replayed, and the store survives a restart', async () => {
    const dbPath = join(dir, 'orders.db');
    const post = (port: number, key: string) => httpSend(port, { method: 'POST', path: '/orders', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ order: 'o-1', item: 'book' }) }, 10_000);
    const a = new ServerProcess({ module: 'examples/app-plain-http/app-claim.ts', dbPath });
    live.push(a);
    let port = await a.start();
    // The app is named as one, as the user's --app said it.
    expect(a.output).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+ \(app orders-claim \(examples\/app-plain-http\/app-claim\.ts\)/);
    const first = await post(port, 'k-1');
    const again = await post(port, 'k-1');
    expect(first).toMatchObject({ kind: 'response', status: 201, body: '{"id":1}' });
    expect(again).toMatchObject({ kind: 'response', status: 201, body: '{"id":1}', headers: { 'idempotent-replay': 'true' } });
    await a.stop();
    const b = new ServerProcess({ module: 'examples/app-plain-http/app-claim.ts', dbPath });
    live.push(b);
    port = await b.start();
    expect(await post(port, 'k-1')).toMatchObject({ kind: 'response', status: 201, body: '{"id":1}' });
    expect(await post(port, 'k-2')).toMatchObject({ kind: 'response', status: 201, body: '{"id":2}' });
  }, 60_000);

  it('runs a job the app deferred past its answer (202, then a setTimeout) without waiting for another request', async () => {
    const c = new ServerProcess({ module: 'src/app/fixtures/accepted-later.ts', dbPath: join(dir, 'later.db') });
    live.push(c);
    const port = await c.start();
    const first = await httpSend(port, { method: 'POST', path: '/orders', headers: { 'content-type': 'application/json', 'idempotency-key': 'k-1' }, body: JSON.stringify({ order: 'o-1', item: 'book' }) }, 10_000);
    expect(first).toMatchObject({ kind: 'response', status: 202, body: '{"id":1}' });
    // The job is due 200 ms after the answer; no request arrives meanwhile.
    await new Promise((r) => setTimeout(r, 800));
    const order = await httpSend(port, { method: 'GET', path: '/orders/1', headers: {}, body: '' }, 10_000);
    expect(order).toMatchObject({ kind: 'response', status: 200 });
  }, 60_000);
});
