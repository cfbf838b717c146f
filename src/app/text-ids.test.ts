// A hosted app whose orders are keyed by crypto.randomUUID() in the store is
// judged by its ids as a service's are (src/service/text-ids.test.ts): the
// descriptor's effects.of returns the UUIDs, the answer's {"id":"<uuid>"} is
// read by default, and a replay that names a fresh UUID fails id-exists.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { AppDescriptor, AppEnv } from './descriptor.js';
import { appService } from './define.js';
import { runServiceCampaign } from '../service/campaign.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

function uuidApp(freshIdOnReplay: boolean): AppDescriptor {
  return {
    name: freshIdOnReplay ? 'uuid-app-fresh-id' : 'uuid-app',
    app: ({ redis }: AppEnv) => async (req: IncomingMessage, res: ServerResponse) => {
      const send = (st: number, o: unknown) => (res.writeHead(st, { 'content-type': 'application/json' }), res.end(JSON.stringify(o)));
      let text = '';
      for await (const c of req) text += String(c);
      const tenant = String(req.headers['x-tenant'] ?? 'default');
      const idem = `idem:${JSON.stringify([tenant, String(req.headers['idempotency-key'])])}`;
      const prev = await redis.get(idem);
      if (prev !== null) {
        const stored = JSON.parse(prev) as { id: string; body: string };
        if (stored.body !== text) return void send(422, { error: 'key reused with another body' });
        // The bug: a fresh id where the stored one belongs.
        return void send(201, { id: freshIdOnReplay ? crypto.randomUUID() : stored.id }); // real-time: allowed (user code: seeded in a run)
      }
      const id = crypto.randomUUID(); // real-time: allowed (user code: seeded in a run)
      const { order } = JSON.parse(text) as { order: string };
      // The order and the key in one MULTI: both or neither.
      await redis.multi().set(`order:${id}`, JSON.stringify({ id, order, tenant })).set(idem, JSON.stringify({ id, body: text })).exec();
      send(201, { id });
    },
    operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
    effects: {
      noun: 'order',
      of: (kv, op) => kv.scan('order:').map(([, v]) => JSON.parse(v) as { id: string; order: string; tenant: string }).filter((o) => o.order === op.runId && o.tenant === op.tenant).map((o) => o.id),
      owner: (kv, id) => {
        const v = kv.get(`order:${id}`);
        if (v === null) return undefined;
        const o = JSON.parse(v) as { order: string; tenant: string };
        return { runId: o.order, tenant: o.tenant };
      },
    },
  };
}

describe('a hosted app keyed by UUID', () => {
  it('holds under lost answers; answering a replay with a fresh UUID fails id-exists, the UUID quoted', async () => {
    const ok = await runServiceCampaign({ def: appService(uuidApp(false)), module: 'uuid-app', runs: 60, seed: 1, faults: ['loseResponse'], foundDir: tmp('rs-uuid-app-') });
    expect(ok.verdict).toBe('holds');
    const bad = await runServiceCampaign({ def: appService(uuidApp(true)), module: 'uuid-app-fresh-id', runs: 60, seed: 1, faults: ['loseResponse'], foundDir: tmp('rs-uuid-app-') });
    expect(bad.verdict).toBe('fails');
    expect(bad.counterexample!.violations.map((v) => v.invariant)).toEqual(['id-exists']);
    expect(bad.counterexample!.violations[0]!.detail).toMatch(/was given order id '[0-9a-f]{8}-[0-9a-f-]{27}', which does not exist$/);
  }, 60_000);
});
