// Each hosted instance is a process of its own: what an app keeps in memory
// (here express-idempotency's default in-memory adapter, which its README
// says is not for production) is per instance and is lost on a kill.
import express from 'express';
import { getSharedIdempotencyService, idempotency } from 'express-idempotency';
import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import { appService } from './define.js';

const service = appService({
  name: 'express-idempotency-memory',
  app: ({ redis }) => {
    const app = express();
    app.use(express.json());
    app.post('/orders', idempotency(), async (req, res) => {
      if (getSharedIdempotencyService().isHit(req)) return;
      const id = await redis.incr('orders:seq');
      await redis.set(`order:${id}`, JSON.stringify({ id, order: (req.body as { order: string }).order, tenant: String(req.headers['x-tenant'] ?? 'default') }));
      res.status(201).json({ id });
    });
    return app;
  },
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
  effects: {
    noun: 'order',
    of: (kv, op) => kv.scan('order:').map(([, v]) => JSON.parse(v) as { id: number; order: string; tenant: string }).filter((o) => o.order === op.runId && o.tenant === op.tenant).map((o) => o.id),
  },
});

describe('in-process memory of a hosted app', () => {
  it('holds within one process, and fails exactly-one once a second instance (a second process) serves the same key', async () => {
    const one = await runServiceCampaign({ def: service, module: 'mem', runs: 60, seed: 2, faults: ['concurrency', 'loseResponse'] });
    expect(one.verdict).toBe('holds');
    const two = await runServiceCampaign({ def: service, module: 'mem', runs: 60, seed: 2, faults: ['concurrency', 'loseResponse', 'instances'] });
    expect(two.verdict).toBe('fails');
    expect(two.counterexample!.scenario.service.instances).toBe(2);
    expect(two.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 60_000);
});
