/**
 * Hostile HTTP against a real `retrysim serve` child (key_atomic, loopback):
 * every rejected request (4xx) leaves the database exactly as it was (read
 * from the file before and after), and no answer ≥ 500 follows a commit
 * unless the request was keyed and a retry of it replays that commit.
 * Crashes are armed through the admin route on some requests so that 500s
 * actually happen.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ServerProcess } from '../src/real/child.js';
import { tempDirs } from '../src/testing/temp-dirs.js';

const tmp = tempDirs();
const dbPath = join(tmp('rs-http-fuzz-'), 'tracker.db');
const server = new ServerProcess({ variant: 'key_atomic', dbPath });
let port = 0;
let reader: Database.Database;

beforeAll(async () => {
  port = await server.start();
  reader = new Database(dbPath, { readonly: true });
}, 30_000);

afterAll(async () => {
  reader?.close();
  await server.stop();
});

/** Everything a request could have written: every report and every key row. */
function snapshot(): string {
  const reports = reader.prepare('SELECT * FROM reports ORDER BY id').all();
  const keys = reader.prepare('SELECT * FROM idempotency_keys ORDER BY key').all();
  return JSON.stringify({ reports, keys });
}

interface Req {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: string;
}

function send(r: Req): Promise<{ status: number; headers: Record<string, unknown>; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const body = Buffer.from(r.body, 'utf8');
    const req = request({ host: '127.0.0.1', port, method: r.method, path: r.path, agent: false, headers: { ...r.headers, 'content-length': String(body.length) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', (e) => resolve({ error: e.message }));
    });
    req.on('error', (e) => resolve({ error: e.message }));
    req.end(body);
  });
}

async function admin(faults: Record<string, unknown>): Promise<void> {
  const r = await send({ method: 'POST', path: '/_admin/faults', headers: { 'content-type': 'application/json' }, body: JSON.stringify(faults) });
  if ('error' in r || r.status !== 200) throw new Error(`admin: ${JSON.stringify(r)}`);
}

const text = fc.oneof(fc.constantFrom('r1', 'm', 't', '', ' ', 'é', '–', '😀', 'a\u0000b', 'x'.repeat(300)), fc.string({ maxLength: 12 }), fc.string({ unit: 'grapheme', maxLength: 6 }));
const report = fc.record({ run_id: text, module: text, title: text, steps: text }, { requiredKeys: [] });
const bodyArb = fc.oneof(
  { weight: 5, arbitrary: report.map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.record({ run_id: text, module: text, title: text, steps: fc.jsonValue({ maxDepth: 1 }), extra: fc.jsonValue({ maxDepth: 1 }) }, { requiredKeys: ['run_id'] }).map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('', 'null', '[]', '{', '{"run_id":', '\ufeff{}')) },
);
const keyArb = fc.oneof(fc.constantFrom('k1', 'k2', '', 'é'.repeat(255), 'é'.repeat(256), 'k'.repeat(256), 'a/b', '"', 'k1, k2'), fc.string({ minLength: 1, maxLength: 10 }).filter((s) => /^[\x20-\x7e]+$/.test(s)));
const headerArb = fc.record({
  'content-type': fc.constantFrom<string | undefined>('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', undefined),
  'idempotency-key': fc.oneof(fc.constant(undefined), keyArb, fc.tuple(keyArb, keyArb).map((a): string[] => [...a])),
  'x-tenant': fc.oneof(fc.constant(undefined), fc.constantFrom('acme', 't/1', '', 't'.repeat(256)), fc.constant<string[]>(['a', 'b'])),
}, { requiredKeys: [] });
const reqArb = fc.record({
  method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH'),
  path: fc.constantFrom('/reports', '/reports', '/reports', '/reports/1', '/reports/%zz', '/reports?run_id=r1', '/nope', '/reports/'),
  headers: headerArb,
  body: bodyArb,
  crash: fc.boolean(),
});

/** Encodes header values as UTF-8 bytes (node sends string chars as Latin-1 and refuses anything beyond). */
function wire(h: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const enc = (s: string) => Buffer.from(s, 'utf8').toString('latin1');
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.map(enc) : enc(v);
  return out;
}

describe('retrysim serve under hostile HTTP', () => {
  test.prop([reqArb], { numRuns: Number(process.env.HTTP_FUZZ_RUNS ?? 150), seed: Number(process.env.FUZZ_SEED ?? 15) })(
    'a rejected request changes nothing; no ≥500 follows a commit unless a keyed retry replays it',
    async ({ crash, ...r }) => {
      const req: Req = { ...r, headers: wire(r.headers) };
      if (crash) await admin({ crashMidRequest: 1 });
      const before = snapshot();
      const res = await send(req);
      if (crash) await admin({ crashMidRequest: 0 });
      expect('error' in res ? res.error : null).toBeNull();
      if ('error' in res) return;
      const after = snapshot();
      if (res.status >= 400 && res.status < 500) expect(after, `${res.status} ${res.body}`).toBe(before);
      if (res.status >= 500 && after !== before) {
        // Something committed behind a 5xx: only acceptable if a keyed retry gets that commit back.
        const key = r.headers['idempotency-key'];
        expect(key, `${res.status} after a commit, with no key to replay it`).toBeDefined();
        const again = await send(req);
        expect('error' in again ? again.error : again.status).toBe(201);
        expect(snapshot()).toBe(after);
      }
    },
    120_000,
  );
});
