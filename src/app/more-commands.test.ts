import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import { runScenario } from '../scenario/run.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';

/**
 * Hand-written idempotency middleware as tutorials write it on node-redis:
 * `exists` to look for a stored answer, `setEx` to keep it a day, `getDel`
 * to take a lock back, `incrBy` for ids. Until 2026-12 the first of these
 * stopped the campaign (exit 2, "which the simulated store does not have"),
 * so the app could not be checked unmodified.
 */
function orders(claim: boolean): AppDescriptor {
  return {
    name: claim ? 'orders-claimed' : 'orders-exists-check',
    app: ({ redis }) => async (req, res) => {
      try {
        let body = '';
        for await (const chunk of req) body += String(chunk);
        const ref = (JSON.parse(body) as { ref: string }).ref;
        const key = `idem:${String(req.headers['x-tenant'])}:${String(req.headers['idempotency-key'])}`;
        if ((await redis.exists(key)) === 1) {
          res.statusCode = 201;
          res.end(await redis.get(key));
          return;
        }
        // The fix: a claim (SET NX PX) between the check and the work; without it two requests pass the check.
        if (claim && (await redis.set(`lock:${key}`, '1', { NX: true, PX: 60_000 })) === null) {
          res.statusCode = 409;
          res.end('{"error":"in progress"}');
          return;
        }
        // And the answer looked for again under the claim: a request that checked before the holder stored
        // its answer and released the lock would otherwise claim afresh and make a second order.
        if (claim && (await redis.exists(key)) === 1) {
          await redis.getDel(`lock:${key}`);
          res.statusCode = 201;
          res.end(await redis.get(key));
          return;
        }
        const id = await redis.incrBy('seq', 1);
        await redis.set(`order:${id}`, ref);
        const answer = JSON.stringify({ id });
        await redis.setEx(key, 86_400, answer);
        if (claim) await redis.getDel(`lock:${key}`);
        res.statusCode = 201;
        res.end(answer);
      } catch {
        res.statusCode = 500;
        res.end('{"error":"internal"}');
      }
    },
    operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }), readsKey: true },
    effects: { noun: 'order', of: (kv, op) => kv.scan('order:').filter(([, v]) => v === op.runId).map(([k]) => Number(k.slice('order:'.length))) },
  };
}

describe('an app on setEx, exists, getDel and incrBy runs unmodified', () => {
  it('the check-then-insert through exists() fails exactly-one, shrunk to one operation; its trace names the commands', async () => {
    const def = appService(orders(false));
    const r = await runServiceCampaign({ def, module: 'orders', runs: 200, seed: 1, faults: ['concurrency'] });
    expect(r.verdict).toBe('fails');
    const c = r.counterexample!;
    expect(c.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(c.scenario.operations).toHaveLength(1);
    const trace = (await runScenario(c.scenario, { service: def, keepTrace: true })).trace.join('\n');
    expect(trace).toMatch(/kv\.get +EXISTS idem:\S+ → 0/);
    expect(trace).toMatch(/kv\.set +SETEX idem:\S+ 86400 "\{"id":\d\}" → OK/);
    expect(trace).toMatch(/kv\.incr +INCRBY seq 1 → \d/);
  });

  it('with a claim between the check and the work it holds, under every fault of the space', async () => {
    const r = await runServiceCampaign({ def: appService(orders(true)), module: 'orders', runs: 300, seed: 1, faults: ['concurrency', 'loseResponse', 'instances'] });
    expect(r.verdict).toBe('holds');
  });
});
