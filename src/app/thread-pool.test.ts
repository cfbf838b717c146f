// A hosted app (a plain Node request listener) that gzips its answer,
// signs it with HMAC through crypto.subtle and guards a slow step with
// AbortSignal.timeout: the thread-pool calls answered on a turn the
// simulation could not see (the run stopped: "awaited something outside the
// simulation"), and the signal aborted on real time (never, in a run of a
// few milliseconds). Both now run on the instance's virtual clock.
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { scrypt } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';

const gzip = promisify(zlib.gzip);

function app(seen: string[], slowMs: number): AppDescriptor {
  return {
    name: 'gzip-app',
    app: ({ redis }) => async (req, res) => {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      const order = (JSON.parse(body) as { order: string }).order;
      const t0 = Date.now(); // real-time: allowed (virtual: under test)
      const slow = await sleep(slowMs, 'done', { signal: AbortSignal.timeout(100) }).catch((e: Error) => (e.cause as Error).name);
      seen.push(`${slow} after ${Date.now() - t0} ms`); // real-time: allowed (virtual: under test)
      const id = await redis.incr('seq');
      await redis.set(`order:${id}`, order);
      const key = await crypto.subtle.importKey('raw', (await promisify(scrypt)('secret', 'salt', 32)) as Buffer, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      const sig = Buffer.from(await crypto.subtle.sign('HMAC', key, Buffer.from(order))).toString('hex');
      const packed = await gzip(JSON.stringify({ id, sig }));
      seen.push(zlib.gunzipSync(packed).toString());
      res.writeHead(201, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      res.end(JSON.stringify({ id, gz: packed.length }));
    },
    operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId }) },
    effects: { noun: 'order', of: (kv, op) => kv.scan('order:').filter(([, v]) => v === op.runId).map(([k]) => Number(k.slice('order:'.length))) },
  };
}

const scenario = parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'gzip', seed: 4, service: { module: 'gzip-app' },
  client: { keySource: 'tool_call', timeoutMs: 10_000 }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
}));

describe('a hosted app that gzips, signs and guards a slow step with AbortSignal.timeout', () => {
  it.each([[250, 'TimeoutError after 100 ms'], [50, 'done after 50 ms']])('a %i ms step under AbortSignal.timeout(100): %s of virtual time, and the answer is made', async (slowMs, first) => {
    const seen: string[] = [];
    const r = await runScenario(scenario, { service: appService(app(seen, slowMs)) });
    expect(r.violations).toEqual([]);
    expect(r.reports).toEqual({ op1: 1 });
    expect(seen[0]).toBe(first);
    expect(JSON.parse(seen[1]!)).toMatchObject({ id: 1, sig: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });
});
