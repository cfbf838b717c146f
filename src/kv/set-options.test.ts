import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import { ServiceError } from '../service/errors.js';
import { appService } from '../app/define.js';
import type { AppDescriptor } from '../app/descriptor.js';
import type { KvClient } from './client.js';
import { storeSetOptions, type NodeRedisSetOptions } from './set-options.js';

describe('SET options as node-redis v4 and v5 spell them', () => {
  it('v5 condition and expiration mean what v4 flags mean; node-redis order decides between several', () => {
    expect(storeSetOptions({ condition: 'NX', expiration: { type: 'PX', value: 30_000 } })).toEqual({ NX: true, PX: 30_000 });
    expect(storeSetOptions({ condition: 'XX', expiration: 'KEEPTTL', GET: true })).toEqual({ XX: true, KEEPTTL: true, GET: true });
    expect(storeSetOptions({ expiration: { type: 'EX', value: 3 } })).toEqual({ EX: 3 });
    expect(storeSetOptions({ NX: true, PX: 10 })).toEqual({ NX: true, PX: 10 });
    // node-redis sends one expiry and one condition: EX before PX, NX before XX, v5's fields before the flags.
    expect(storeSetOptions({ EX: 1, PX: 5 })).toEqual({ EX: 1 });
    expect(storeSetOptions({ NX: true, XX: true })).toEqual({ NX: true });
    expect(storeSetOptions({ condition: 'XX', NX: true })).toEqual({ XX: true });
  });

  it('what the store cannot do is named, not dropped', () => {
    expect(storeSetOptions({ PXAT: 1 })).toEqual({ unsupported: 'set(…, { PXAT })' });
    expect(storeSetOptions({ expiration: { type: 'EXAT', value: 1 } })).toEqual({ unsupported: 'set(…, { expiration: { type: "EXAT" } })' });
    expect(storeSetOptions({ condition: 'IFEQ' } as unknown as NodeRedisSetOptions)).toEqual({ unsupported: 'set(…, { condition: "IFEQ" })' });
  });
});

/** A claim-first app: SET pending NX (PX 30 s), the work, then SET done XX — written with the options `claim` and `finish` give. */
function vouchers(claim: object, finish: object): AppDescriptor {
  return {
    name: 'vouchers',
    app: ({ redis }) => async (req, res) => {
      const r = redis as unknown as { set(k: string, v: string, o: object): Promise<string | null> } & KvClient;
      try {
        let body = '';
        for await (const chunk of req) body += String(chunk);
        const code = (JSON.parse(body) as { code: string }).code;
        const key = `idem:${JSON.stringify([String(req.headers['x-tenant']), String(req.headers['idempotency-key'])])}`;
        if ((await r.set(key, JSON.stringify({ body }), claim)) === null) {
          const seen = JSON.parse((await r.get(key)) ?? '{}') as { body?: string; id?: number };
          res.statusCode = seen.body !== undefined && seen.body !== body ? 422 : seen.id !== undefined ? 201 : 409;
          res.end(JSON.stringify({ id: seen.id }));
          return;
        }
        const id = await r.incr('seq');
        await r.set(`voucher:${id}`, code, {});
        await r.set(key, JSON.stringify({ body, id }), finish);
        res.statusCode = 201;
        res.end(JSON.stringify({ id }));
      } catch {
        res.statusCode = 500;
        res.end('{"error":"internal"}');
      }
    },
    operation: { path: '/vouchers', body: (op) => JSON.stringify({ code: op.runId, note: op.title }) },
    effects: { noun: 'voucher', of: (kv, op) => kv.scan('voucher:').filter(([, v]) => v === op.runId).map(([k]) => Number(k.slice('voucher:'.length))) },
  };
}

const campaign = (desc: AppDescriptor) => runServiceCampaign({ def: appService(desc), module: 'vouchers', runs: 30, seed: 1, faults: ['concurrency', 'slow'] });

describe('a node-redis v5 app on the simulated store', () => {
  it("a claim written with v5's { condition: 'NX', expiration } holds, as the same claim in v4's flags does", async () => {
    expect((await campaign(vouchers({ NX: true, PX: 30_000 }, { XX: true }))).verdict).toBe('holds');
    // Until 2026-12 the store read only v4's flags: this claim was a plain overwrite and failed exactly-one with no fault.
    expect((await campaign(vouchers({ condition: 'NX', expiration: { type: 'PX', value: 30_000 } }, { condition: 'XX' }))).verdict).toBe('holds');
  });

  it('the canary: the same app without the condition fails exactly-one', async () => {
    const r = await campaign(vouchers({ expiration: { type: 'PX', value: 30_000 } }, { condition: 'XX' }));
    expect(r.verdict).toBe('fails');
    expect(r.counterexample?.violations.map((v) => v.invariant)).toContain('exactly-one');
  });

  it('an absolute expiry (PXAT) is one line naming it, not an option silently dropped', async () => {
    await expect(campaign(vouchers({ NX: true, PXAT: 1 }, {}))).rejects.toThrow(ServiceError);
    await expect(campaign(vouchers({ NX: true, PXAT: 1 }, {}))).rejects.toThrow(/the app called redis\.set\(…, \{ PXAT \}\), which the simulated store does not have/);
  });
});
