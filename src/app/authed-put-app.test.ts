// A hosted app as many are: an auth middleware in front (a bearer token that
// names the tenant; 401 without it) and a route whose URL names the resource
// (PUT /orders/:ref, idempotent by its URL). The descriptor's operation gives
// each operation its path and its credentials (operation.path as a function,
// operation.headers); until 2026-12 neither could be said, and such an app
// answered every request 401 (inconclusive) or had no route for the one
// path every operation shared.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { AppDescriptor, AppEnv } from './descriptor.js';
import { appService } from './define.js';
import { runServiceCampaign } from '../service/campaign.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const TENANT_OF_TOKEN: Record<string, string> = { 'token-acme': 'default', 'token-globex': 'globex' };
const tokenOf = (tenant: string) => (tenant === 'default' ? 'token-acme' : `token-${tenant}`);
// It reads no Idempotency-Key: its URL is the key, so the key-reuse probe does not apply.
const FAULTS = ['loseResponse', 'crash', 'concurrency', 'kill', 'pause', 'tenants'] as const;

function authedPutApp(o: { atomic: boolean }): AppDescriptor {
  return {
    name: o.atomic ? 'authed-put-app' : 'authed-put-app-check-then-set',
    app: ({ redis }: AppEnv) => async (req: IncomingMessage, res: ServerResponse) => {
      const send = (st: number, body: unknown) => (res.writeHead(st, { 'content-type': 'application/json' }), res.end(JSON.stringify(body)));
      // The middleware: the token names the tenant.
      const m = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''));
      const tenant = m ? TENANT_OF_TOKEN[m[1]!] : undefined;
      if (tenant === undefined) return void send(401, { error: 'unauthorized' });
      const route = /^\/orders\/([^/?]+)$/.exec(req.url ?? '');
      if (req.method !== 'PUT' || route === null) return void send(404, { error: `no route for ${req.method} ${req.url}` });
      for await (const _ of req) void _;
      const ref = decodeURIComponent(route[1]!);
      const at = `ref:${JSON.stringify([tenant, ref])}`;
      if (o.atomic) {
        // Claim the ref with the order's id in one SET NX: the first PUT makes it, later ones read it.
        const id = await redis.incr('orders:seq');
        if ((await redis.set(at, String(id), { NX: true })) === 'OK') {
          await redis.set(`order:${id}`, JSON.stringify({ id, ref, tenant }));
          return void send(200, { id });
        }
        // The order of the claim's winner may not be written yet: a 409 makes the client ask again.
        const won = Number(await redis.get(at));
        return void ((await redis.get(`order:${won}`)) === null ? send(409, { error: 'in progress' }) : send(200, { id: won }));
      }
      const seen = await redis.get(at);
      if (seen !== null) return void send(200, { id: Number(seen) });
      const id = await redis.incr('orders:seq');
      await redis.set(`order:${id}`, JSON.stringify({ id, ref, tenant }));
      await redis.set(at, String(id));
      send(200, { id });
    },
    operation: {
      method: 'PUT',
      path: (op) => `/orders/${encodeURIComponent(op.runId)}`,
      body: () => '{}',
      headers: (op) => ({ authorization: `Bearer ${tokenOf(op.tenant)}` }),
    },
    effects: {
      noun: 'order',
      of: (kv, op) => kv.scan('order:').map(([, v]) => JSON.parse(v) as { id: number; ref: string; tenant: string }).filter((x) => x.ref === op.runId && x.tenant === op.tenant).map((x) => x.id).sort((a, b) => a - b),
      owner: (kv, id) => {
        const v = kv.get(`order:${id}`);
        if (v === null) return undefined;
        const x = JSON.parse(v) as { ref: string; tenant: string };
        return { runId: x.ref, tenant: x.tenant };
      },
    },
  };
}

describe('a hosted app behind a bearer token, with a route naming its resource', () => {
  it('the atomic claim holds (every request authenticated, each to its own URL); check-then-set fails exactly-one', async () => {
    const ok = await runServiceCampaign({ def: appService(authedPutApp({ atomic: true })), module: 'authed-put-app', runs: 300, seed: 1, faults: [...FAULTS], foundDir: tmp('rs-authed-app-') });
    expect(ok.verdict, JSON.stringify(ok.counterexample?.violations ?? ok.inconclusive)).toBe('holds');
    const bad = await runServiceCampaign({ def: appService(authedPutApp({ atomic: false })), module: 'authed-put-app-check-then-set', runs: 300, seed: 1, faults: [...FAULTS], foundDir: tmp('rs-authed-app-') });
    expect(bad.verdict).toBe('fails');
    expect(bad.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 120_000);
});
