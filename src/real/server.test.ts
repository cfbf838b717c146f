import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../tracker/validate.js';
import { ServerProcess } from './child.js';
import { httpSend } from './http-transport.js';

// Bad input against a running `retrysim serve` child: every answer is the
// right 4xx and the database is untouched (row counts read from the file).

const dir = mkdtempSync(join(tmpdir(), 'retrysim-serve-test-'));
const dbPath = join(dir, 'tracker.db');
const server = new ServerProcess({ variant: 'key_atomic', dbPath });
let port = 0;
let reader: Database.Database;

const GOOD = { run_id: 'r1', module: 'm', title: 't', steps: '' };

function counts(): { reports: number; keys: number } {
  const reports = (reader.prepare('SELECT count(*) AS n FROM reports').get() as { n: number }).n;
  const keys = (reader.prepare('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n;
  return { reports, keys };
}

async function send(method: string, path: string, body = '', headers: Record<string, string> = {}) {
  const o = await httpSend(port, { method, path, headers: { 'content-type': 'application/json', ...headers }, body }, 5000);
  if (o.kind !== 'response') throw new Error(`${method} ${path}: ${o.reason}`);
  return { status: o.status, headers: o.headers, json: JSON.parse(o.body) as Record<string, unknown> };
}

beforeAll(async () => {
  port = await server.start();
  reader = new Database(dbPath, { readonly: true });
});

afterAll(async () => {
  reader?.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('retrysim serve: bad input writes nothing', () => {
  const bad: Array<[name: string, method: string, path: string, body: string, headers: Record<string, string>, status: number, message: RegExp]> = [
    ['malformed JSON', 'POST', '/reports', '{"run_id": ', {}, 400, /malformed JSON/],
    ['a JSON array', 'POST', '/reports', '[1,2]', {}, 400, /must be a JSON object/],
    ['null', 'POST', '/reports', 'null', {}, 400, /must be a JSON object/],
    ['a number where a string belongs', 'POST', '/reports', JSON.stringify({ ...GOOD, run_id: 7 }), {}, 400, /'run_id' must be a string, got number/],
    ['steps as an array', 'POST', '/reports', JSON.stringify({ ...GOOD, steps: ['a'] }), {}, 400, /'steps' must be a string, got array/],
    ['a missing field', 'POST', '/reports', JSON.stringify({ run_id: 'r', module: 'm', steps: '' }), {}, 400, /missing field 'title'/],
    ['an empty title', 'POST', '/reports', JSON.stringify({ ...GOOD, title: '' }), {}, 400, /'title' must not be empty/],
    ['an unknown field', 'POST', '/reports', JSON.stringify({ ...GOOD, admin: true }), {}, 400, /unknown field/],
    ['an empty body', 'POST', '/reports', '', {}, 400, /malformed JSON/],
    ['a key of 256 characters', 'POST', '/reports', JSON.stringify(GOOD), { 'idempotency-key': 'k'.repeat(256) }, 400, /1–255 characters, got 256/],
    ['an empty key', 'POST', '/reports', JSON.stringify(GOOD), { 'idempotency-key': '' }, 400, /got 0/],
    ['a tenant of 256 characters', 'POST', '/reports', JSON.stringify(GOOD), { 'x-tenant': 't'.repeat(256) }, 400, /x-tenant/],
    ['an unknown route', 'GET', '/nope', '', {}, 404, /no route/],
    ['POST to an unknown route', 'POST', '/report', JSON.stringify(GOOD), {}, 404, /no route/],
    ['DELETE /reports', 'DELETE', '/reports', '', {}, 405, /not allowed/],
    ['PUT /reports/1', 'PUT', '/reports/1', JSON.stringify(GOOD), {}, 405, /not allowed/],
    ['PATCH /reports', 'PATCH', '/reports', JSON.stringify(GOOD), {}, 405, /not allowed/],
    ['a non-numeric report id', 'GET', '/reports/abc', '', {}, 400, /positive integer/],
    ['a list without run_id', 'GET', '/reports', '', {}, 400, /run_id/],
    ['the admin route is not /reports', 'POST', '/_admin/faults', '{"slowMs": -1}', {}, 400, /slowMs/],
    ['a text/plain body', 'POST', '/reports', JSON.stringify(GOOD), { 'content-type': 'text/plain' }, 415, /content-type 'text\/plain' is not supported/],
    ['a form body', 'POST', '/reports', JSON.stringify(GOOD), { 'content-type': 'application/x-www-form-urlencoded' }, 415, /application\/json/],
    ['JSON in latin1', 'POST', '/reports', JSON.stringify(GOOD), { 'content-type': 'application/json; charset=iso-8859-1' }, 415, /charset 'iso-8859-1'/],
    ['a key of 256 two-byte characters', 'POST', '/reports', JSON.stringify(GOOD), { 'idempotency-key': 'é'.repeat(256) }, 400, /1–255 characters, got 256/],
  ];

  it('the admin route refuses a slowMs the lease no longer covers, and applies nothing of that request', async () => {
    const before = (await send('GET', '/_admin/faults')).json;
    const r = await send('POST', '/_admin/faults', JSON.stringify({ slowMs: 3000, dropResponses: 2 }));
    expect(r.status).toBe(422);
    expect(String(r.json.error)).toMatch(/lease 5000 ms must exceed client timeout 2000 ms \+ longest processing 3000 ms = 5000 ms/);
    expect((await send('GET', '/_admin/faults')).json).toEqual(before);
    // Just inside the rule is accepted, then put back.
    expect((await send('POST', '/_admin/faults', JSON.stringify({ slowMs: 2999 }))).status).toBe(200);
    expect((await send('POST', '/_admin/faults', JSON.stringify({ slowMs: before.slowMs }))).status).toBe(200);
  });

  it.each(bad)('%s → the right 4xx, nothing written', async (_name, method, path, body, headers, status, message) => {
    const before = counts();
    const r = await send(method, path, body, headers);
    expect(r.status).toBe(status);
    expect(String(r.json.error)).toMatch(message);
    expect(counts()).toEqual(before);
  });

  it(`an oversized body → 413 (limit ${MAX_BODY_BYTES} bytes), with and without content-length`, async () => {
    const before = counts();
    const big = JSON.stringify({ ...GOOD, steps: 'x'.repeat(MAX_BODY_BYTES) });
    const r = await send('POST', '/reports', big, { 'idempotency-key': 'big' });
    expect(r.status).toBe(413);
    expect(String(r.json.error)).toContain(String(MAX_BODY_BYTES));
    // Chunked (no content-length): the limit is enforced while reading.
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/reports', agent: false, headers: { 'transfer-encoding': 'chunked' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      for (let i = 0; i < 20; i++) req.write('y'.repeat(8192));
      req.end();
    });
    expect(status).toBe(413);
    // Exactly at the limit is accepted (it is the limit, not the limit − 1).
    const pad = MAX_BODY_BYTES - JSON.stringify({ ...GOOD, run_id: 'edge', steps: '' }).length;
    const edge = JSON.stringify({ ...GOOD, run_id: 'edge', steps: 's'.repeat(pad) });
    expect(Buffer.byteLength(edge)).toBe(MAX_BODY_BYTES);
    expect((await send('POST', '/reports', edge)).status).toBe(201);
    expect(counts()).toEqual({ reports: before.reports + 1, keys: before.keys });
  });

  it('same key with a different body → 422, nothing written', async () => {
    const a = await send('POST', '/reports', JSON.stringify({ ...GOOD, run_id: 'k422' }), { 'idempotency-key': 'k-422' });
    expect(a.status).toBe(201);
    const before = counts();
    const b = await send('POST', '/reports', JSON.stringify({ ...GOOD, run_id: 'k422', title: 'other' }), { 'idempotency-key': 'k-422' });
    expect(b.status).toBe(422);
    expect(counts()).toEqual(before);
  });

  it('keys with separator characters never reach another tenant\'s entry', async () => {
    // Pairs that collide under naive "tenant/method/key" or "tenant:key" concatenation.
    const pairs: Array<[[string, string], [string, string]]> = [
      [['a', 'b/c'], ['a/b', 'c']],
      [['a', 'POST/c'], ['a/POST', 'c']],
      [['a', 'b:c'], ['a:b', 'c']],
      [['a', '"b'], ['a"', 'b']],
      [['a', '","POST","b'], ['a","POST', 'b']],
      [['x', "b'c"], ["x'b", 'c']],
    ];
    let i = 0;
    for (const [[t1, k1], [t2, k2]] of pairs) {
      const body = JSON.stringify({ ...GOOD, run_id: `sep-${i++}` });
      const first = await send('POST', '/reports', body, { 'x-tenant': t1, 'idempotency-key': k1 });
      expect(first.status).toBe(201);
      const before = counts();
      const second = await send('POST', '/reports', body, { 'x-tenant': t2, 'idempotency-key': k2 });
      expect(second.status, `${t2} + ${k2} after ${t1} + ${k1}`).toBe(201);
      expect(second.headers['idempotent-replay']).toBeUndefined();
      expect(second.json.report_id).not.toBe(first.json.report_id);
      expect(counts()).toEqual({ reports: before.reports + 1, keys: before.keys + 1 });
      // And each tenant's own retry is still a replay of its own report.
      const again = await send('POST', '/reports', body, { 'x-tenant': t1, 'idempotency-key': k1 });
      expect(again.headers['idempotent-replay']).toBe('true');
      expect(again.json.report_id).toBe(first.json.report_id);
    }
  });

  it('a request without content-type → 415, nothing written', async () => {
    const before = counts();
    const o = await httpSend(port, { method: 'POST', path: '/reports', headers: {}, body: JSON.stringify(GOOD) }, 5000);
    expect(o.kind === 'response' && o.status).toBe(415);
    expect(counts()).toEqual(before);
  });

  it('a repeated Idempotency-Key (or X-Tenant) is 400, not one merged key "a1, b1"', async () => {
    const { request } = await import('node:http');
    const post = (headers: Record<string, string[]>) => new Promise<{ status: number; body: string }>((resolve, reject) => {
      const body = JSON.stringify({ ...GOOD, run_id: 'dup' });
      const r = request({ host: '127.0.0.1', port, method: 'POST', path: '/reports', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      r.on('error', reject);
      r.end(body);
    });
    const before = counts();
    const a = await post({ 'idempotency-key': ['a1', 'b1'] });
    expect(a.status).toBe(400);
    expect(a.body).toMatch(/header 'idempotency-key' given 2 times/);
    expect((await post({ 'x-tenant': ['t1', 't2'] })).status).toBe(400);
    expect(counts()).toEqual(before);
  });

  it('a key is counted in characters: 255 two-byte characters are accepted and replay as one key', async () => {
    const key = 'é'.repeat(255);
    const body = JSON.stringify({ ...GOOD, run_id: 'utf8-key' });
    const a = await send('POST', '/reports', body, { 'idempotency-key': key });
    expect(a.status).toBe(201);
    const b = await send('POST', '/reports', body, { 'idempotency-key': key });
    expect(b.headers['idempotent-replay']).toBe('true');
    expect(b.json.report_id).toBe(a.json.report_id);
  });

  it('a client that disconnects mid-body is dropped quietly: nothing written, the server keeps serving', async () => {
    const { connect } = await import('node:net');
    const before = counts();
    await new Promise<void>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.write('POST /reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"run_id"');
        s.destroy();
        resolve();
      });
    });
    expect((await send('GET', '/reports?run_id=r1')).status).toBe(200);
    expect(counts()).toEqual(before);
    expect(server.output).not.toMatch(/^\s+at .*:\d+:\d+/m);
  });

  it('a request the HTTP parser refuses (a bad chunk size) gets a 400 that says why, and nothing is written', async () => {
    const { connect } = await import('node:net');
    const before = counts();
    const answer = await new Promise<string>((resolve) => {
      let got = '';
      const s = connect(port, '127.0.0.1', () => {
        s.write('POST /reports HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\nabc\r\n0\r\n\r\n');
      });
      s.on('data', (d) => (got += d.toString()));
      s.on('close', () => resolve(got));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toMatch(/\{"error":"malformed HTTP request \(HPE_[A-Z_]+\): [^"]+"\}$/);
    expect(counts()).toEqual(before);
  });

  it('a good request after all that writes exactly one report and one key', async () => {
    const before = counts();
    const r = await send('POST', '/reports', JSON.stringify({ ...GOOD, run_id: 'final' }), { 'idempotency-key': 'final' });
    expect(r.status).toBe(201);
    expect(counts()).toEqual({ reports: before.reports + 1, keys: before.keys + 1 });
  });
});
