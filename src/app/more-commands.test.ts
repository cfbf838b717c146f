import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import { runScenario } from '../scenario/run.js';
import { parseScenario } from '../scenario/load.js';
import { SCENARIO_FORMAT } from '../scenario/schema.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';

type AppEnvRedis = Parameters<AppDescriptor['app']>[0]['redis'];

/**
 * Hand-written idempotency middleware as tutorials write it on node-redis:
 * `exists` to look for a stored answer, `setEx` to keep it a day, `getDel`
 * to take a lock back, `incrBy` for ids. Until 2026-12 the first of these
 * stopped the campaign (exit 2, "which the simulated store does not have"),
 * so the app could not be checked unmodified.
 */
function orders(claim: boolean, hashes = false): AppDescriptor {
  // With hashes: the order a hash of its fields, the stored answer a hash with a day's EXPIRE (HSET keeps no TTL of its own).
  const answerOf = async (redis: AppEnvRedis, key: string) => (hashes ? await redis.hGet(key, 'answer') : await redis.get(key));
  return {
    name: `${claim ? 'orders-claimed' : 'orders-exists-check'}${hashes ? '-hashes' : ''}`,
    app: ({ redis }) => async (req, res) => {
      try {
        let body = '';
        for await (const chunk of req) body += String(chunk);
        const ref = (JSON.parse(body) as { ref: string }).ref;
        const key = `idem:${String(req.headers['x-tenant'])}:${String(req.headers['idempotency-key'])}`;
        if ((await redis.exists(key)) === 1) {
          res.statusCode = 201;
          res.end(await answerOf(redis, key));
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
          res.end(await answerOf(redis, key));
          return;
        }
        const id = await redis.incrBy('seq', 1);
        const tenant = String(req.headers['x-tenant']);
        if (hashes) await redis.hSet(`order:${id}`, { ref, tenant });
        else await redis.set(`order:${id}`, ref);
        const answer = JSON.stringify({ id });
        if (hashes) {
          await redis.hSet(key, 'answer', answer);
          await redis.expire(key, 86_400);
        } else {
          await redis.setEx(key, 86_400, answer);
        }
        if (claim) await redis.getDel(`lock:${key}`);
        res.statusCode = 201;
        res.end(answer);
      } catch (e) {
        res.statusCode = 500;
        res.end(JSON.stringify({ error: String(e) }));
      }
    },
    operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }), readsKey: true },
    effects: {
      noun: 'order',
      // A hash reads as the JSON of its fields in the effects view.
      of: (kv, op) => kv.scan('order:').filter(([, v]) => (hashes ? (JSON.parse(v) as { ref: string }).ref : v) === op.runId).map(([k]) => Number(k.slice('order:'.length))),
    },
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

describe('the same app keeping its order and answer in hashes (hSet, hGet, expire)', () => {
  it('fails exactly-one without the claim, holds with it; HSET and HGET are named in the trace', async () => {
    const bad = appService(orders(false, true));
    const r = await runServiceCampaign({ def: bad, module: 'orders', runs: 200, seed: 1, faults: ['concurrency'] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
    const trace = (await runScenario(r.counterexample!.scenario, { service: bad, keepTrace: true })).trace.join('\n');
    expect(trace).toMatch(/kv\.set +HSET order:\d+ ref "run-1" tenant "\w+" → 2/);
    const ok = await runServiceCampaign({ def: appService(orders(true, true)), module: 'orders', runs: 300, seed: 1, faults: ['concurrency', 'loseResponse', 'instances'] });
    expect(ok.verdict).toBe('holds');
  });
});

describe('a lost answer to a command of another spelling', () => {
  it("names the command the app sent (HSET), not the step's (SET), in the error the app sees", async () => {
    const def = appService(orders(false, true));
    // The order's HSET is the second command on the kv.set step (after none: the first kv.set reach is the order's hash).
    const s = parseScenario(JSON.stringify({
      format: SCENARIO_FORMAT, name: 'lost HSET', seed: 1,
      service: { module: 'orders', instances: 1, leaseMs: 5000, allowUnsafeLease: true, clockOffsetMs: [] },
      client: { keySource: 'tool_call', policy: 'bug-report-harness', maxAttempts: 1, timeoutMs: 1000, model: { resubmits: 0, reword: false } },
      network: { latencyMeanMs: 1, latencySdMs: 0, loseResponses: 0 },
      faults: { loseResponseAfterCommit: 0, crashMidRequest: 1, slowMs: 0, crashAt: 'kv.set: answer lost', crashAtNth: 1 },
      operations: [{ id: 'op1', runId: 'run-1', module: 'order', title: 'order 1', steps: '', workers: 1, startMs: 0, staggerMs: 0 }],
      expect: {},
    }));
    const trace = (await runScenario(s, { service: def, keepTrace: true })).trace.join('\n');
    expect(trace).toMatch(/kv\.set +HSET order:1 /);
    expect(trace).toContain('the answer to HSET was lost after the store ran it');
  });
});
