import express from 'express';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { runServiceCampaign } from '../service/campaign.js';
import type { AppDescriptor, AppEnv } from './descriptor.js';
import { appService } from './define.js';

/**
 * An Express app behind a listener of the user's own — `(req, res) =>
 * app(req, res)`, the shape of a logging wrapper or of a descriptor that
 * maps the campaign's `x-tenant` onto the API key the app reads. Express
 * moves the request and response under its own prototypes, and
 * light-my-request only links those to its own when the listener is the
 * Express app itself: behind the wrapper every answer went out with an empty
 * body (`answer 201 {"body":""}`, the client's result "failed"), and a
 * correct claim app stopped the campaign with "the app kept working for
 * 20000 turns without answering" (a user's app, 2026-12-02).
 */
function claimApp(wrapped: boolean): AppDescriptor {
  return {
    name: wrapped ? 'express-wrapped' : 'express-bare',
    app: ({ redis }: AppEnv) => {
      const app = express();
      app.post('/orders', async (req, res) => {
        let text = '';
        for await (const c of req) text += String(c);
        const order = (JSON.parse(text) as { order: string }).order;
        const tenant = req.get('x-tenant') ?? 'default';
        const slot = `idem:${JSON.stringify([tenant, req.get('idempotency-key')])}`;
        try {
          if ((await redis.set(slot, 'pending', { NX: true })) === null) {
            const v = await redis.get(slot);
            if (v === null || v === 'pending') return void res.status(409).json({ error: 'in progress' });
            return void res.status(201).json(JSON.parse(v));
          }
          const id = await redis.incr('seq');
          await redis.set(`order:${id}`, JSON.stringify([tenant, order]));
          await redis.set(slot, JSON.stringify({ id }));
          res.status(201).json({ id });
        } catch {
          res.status(500).json({ error: 'internal' });
        }
      });
      return wrapped ? (req, res) => app(req, res) : app;
    },
    operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId }) },
    effects: {
      noun: 'order',
      of: (kv, op) => kv.scan('order:').filter(([, v]) => v === JSON.stringify([op.tenant, op.runId])).map(([k]) => Number(k.slice('order:'.length))),
      owner: (kv, id) => {
        const v = kv.get(`order:${id}`);
        if (v === null) return undefined;
        const [tenant, runId] = JSON.parse(v) as [string, string];
        return { runId, tenant };
      },
    },
  };
}

const oneOrder = (module: string) => parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'one order', seed: 1, service: { module, instances: 1 },
  client: { keySource: 'tool_call', maxAttempts: 3 },
  operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
}));

// Order matters: once light-my-request has delivered to a bare Express app, it has linked Express's
// prototypes (shared by every app of that express module) to its own, and a wrapped app works from then
// on. The wrapped app runs first, as it does in a user's process that hosts only it.
describe('an Express app behind a listener of its own', () => {
  it('a correct claim behind the wrapper holds the standard campaign (no stop, no false failure)', async () => {
    const r = await runServiceCampaign({ def: appService(claimApp(true)), module: 'express-wrapped', runs: 100, seed: 1 });
    expect(r.verdict).toBe('holds');
  }, 60_000);

  it('answers with its body, as the bare Express app does', async () => {
    for (const wrapped of [true, false]) {
      const def = appService(claimApp(wrapped));
      const run = await runScenario(oneOrder(def.name), { service: def, keepTrace: true });
      expect(run.trace.map(String).find((l) => l.includes(' answer 201 ')), def.name).toMatch(/answer 201 \{"body":"\{\\"id\\":1\}"\}/);
      expect(run.violations, def.name).toEqual([]);
    }
  });
});
