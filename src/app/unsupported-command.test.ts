import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import { ServiceError } from '../service/errors.js';
import { kvClient } from '../kv/client.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';

/**
 * An app written against node-redis may call a command the simulated store
 * does not have (HEXISTS, LPUSH, SETNX...). Its call throws inside the app; a
 * framework turns that into a 500 and nothing is ever written, which met
 * every safety invariant: a false "holds". It must be a broken module
 * instead (exit 2), named in one line with the commands the store has.
 */
function redemptions(call: (redis: Record<string, unknown>, key: string) => Promise<unknown>): AppDescriptor {
  return {
    name: 'redemptions',
    app: ({ redis }) => async (req, res) => {
      // As Express and Fastify do: an exception in the handler is a 500, not a crash.
      try {
        let body = '';
        for await (const chunk of req) body += String(chunk);
        const code = (JSON.parse(body) as { code: string }).code;
        const key = `idem:${String(req.headers['x-tenant'])}:${String(req.headers['idempotency-key'])}`;
        if (await call(redis as unknown as Record<string, unknown>, key)) {
          res.statusCode = 200;
          res.end(await redis.get(key));
          return;
        }
        const id = await redis.incr('seq');
        await redis.set(`redemption:${id}`, code);
        await redis.set(key, JSON.stringify({ id }));
        res.statusCode = 201;
        res.end(JSON.stringify({ id }));
      } catch {
        res.statusCode = 500;
        res.end('{"error":"internal"}');
      }
    },
    operation: { path: '/redemptions', body: (op) => JSON.stringify({ code: op.runId, note: op.title }) },
    effects: { noun: 'redemption', of: (kv, op) => kv.scan('redemption:').filter(([, v]) => v === op.runId).map(([k]) => Number(k.slice('redemption:'.length))) },
  };
}

const campaign = (desc: AppDescriptor) => runServiceCampaign({ def: appService(desc), module: 'redemptions', runs: 20, seed: 1, faults: ['loseResponse'] });

describe('a node-redis command the simulated store does not have', () => {
  it('is a broken app naming the command and the commands there are, even when the app catches the error (no false holds)', async () => {
    const hGet = redemptions((redis, key) => (redis.hExists as (k: string, f: string) => Promise<boolean>)(key, 'body'));
    await expect(campaign(hGet)).rejects.toThrow(ServiceError);
    await expect(campaign(hGet)).rejects.toThrow(/POST \/redemptions: the app called redis\.hExists\(\), which the simulated store does not have; it has get, set .*putIf/);
    // In the user's words: an app, not a service module.
    await expect(campaign(hGet)).rejects.toThrow(/^app '/);
    // node-redis also answers to the upper-case names.
    const upper = redemptions((redis, key) => (redis.HEXISTS as (k: string, f: string) => Promise<boolean>)(key, 'body'));
    await expect(campaign(upper)).rejects.toThrow(/redis\.HEXISTS\(\)/);
  });

  it('the same app written with GET holds (the canary: the refusal is about the command, not the app)', async () => {
    const withGet = redemptions(async (redis, key) => (await (redis.get as (k: string) => Promise<string | null>)(key)) !== null);
    expect((await campaign(withGet)).verdict).toBe('holds');
  });

  it('a command the store lacks, called in app(), is named too; a property node-redis does not have stays undefined (not thenable)', async () => {
    const inFactory: AppDescriptor = { ...redemptions(async () => false), app: ({ redis }) => { void (redis as unknown as { eval(): unknown }).eval(); return (_q, s) => s.end('{}'); } };
    await expect(campaign(inFactory)).rejects.toThrow(/the app called redis\.eval\(\), which the simulated store does not have/);
    const c = kvClient() as unknown as Record<string, unknown>;
    // The connection's surface is node-redis's for a connected client (src/kv/client.test.ts).
    expect(c.isOpen).toBe(true);
    expect(c.then).toBeUndefined();
    expect(typeof c.get).toBe('function');
    // Outside a request (at import time) the call still throws, saying the same.
    expect(() => (c.lPush as () => unknown)()).toThrow(/redis\.lPush\(\), which the simulated store does not have/);
  });
});
