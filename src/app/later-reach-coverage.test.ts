import { describe, expect, it } from 'vitest';
import { neverReached } from '../campaign/coverage.js';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { runServiceCampaign } from '../service/campaign.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';

/**
 * An app that stores the replay answer before it writes the order (an
 * "optimisation": duplicates are answered at once): claim (`SET NX`),
 * `INCR`, the answer (`SET`), the order (`SET`). Its one failing fault is
 * the answer of its *second* `SET` lost: the request answers 500 with the
 * answer stored and no order, and the retry is handed an id that does not
 * exist. A 300-run campaign that never struck that reach said "holds" and
 * "every situation of its fault space was reached" (a user's Hono app of
 * this shape, 2026-12-02): the coverage table counted a crash at `kv.set`
 * at any reach in one row. The later reaches are rows of their own now.
 */
const answerBeforeOrder: AppDescriptor = {
  name: 'answer-before-order',
  app: ({ redis }) => async (req, res) => {
    try {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      const order = (JSON.parse(body) as { order: string }).order;
      const tenant = String(req.headers['x-tenant'] ?? 'default');
      const slot = `idem:${tenant}:${String(req.headers['idempotency-key'])}`;
      if ((await redis.set(slot, 'pending', { NX: true })) === null) {
        const v = await redis.get(slot);
        res.statusCode = v === 'pending' ? 409 : 201;
        res.end(v === 'pending' ? '{"error":"in progress"}' : v);
        return;
      }
      const id = await redis.incr('seq');
      await redis.set(slot, JSON.stringify({ id }));
      await redis.set(`order:${id}`, JSON.stringify([tenant, order]));
      res.statusCode = 201;
      res.end(JSON.stringify({ id }));
    } catch {
      res.statusCode = 500;
      res.end('{"error":"internal"}');
    }
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

const def = appService(answerBeforeOrder);

describe('coverage of faults at a later reach of a store command in one request', () => {
  it("the second SET's answer lost is this app's failure (what the row below stands for)", async () => {
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'lost answer', seed: 1, service: { module: 'answer-before-order', instances: 1 },
      client: { keySource: 'tool_call', maxAttempts: 3 },
      faults: { crashMidRequest: 1, crashAt: 'kv.set: answer lost', crashAtNth: 2 },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
    }));
    const r = await runScenario(s, { service: def });
    expect(r.violations.map((v) => v.invariant)).toContain('id-exists');
  });

  it('a campaign that never struck it does not say every situation was reached: the row is there, 0, and never reached', async () => {
    // Seed 1's first 60 runs strike kv.set only at other reaches: the campaign holds, as a short one did on the user's app.
    const r = await runServiceCampaign({ def, module: 'answer-before-order', runs: 60, seed: 1, faults: ['crash', 'loseResponse'] });
    expect(r.verdict).toBe('holds');
    const rows = Object.fromEntries(r.coverage!.rows.map((x) => [x.id, x]));
    expect(rows['crash@kv.set: answer lost#2']).toEqual({ id: 'crash@kv.set: answer lost#2', what: 'a crash at kv.set: answer lost, at its 2nd reach in a request', runs: 0 });
    expect(neverReached(r.coverage!).map((x) => x.id)).toContain('crash@kv.set: answer lost#2');
    // kv.set is sent three times in a request, INCR once: rows for the reaches there are, none for others.
    expect(rows['crash@kv.set: answer lost#3']).toBeDefined();
    expect(rows['crash@kv.set: answer lost#4']).toBeUndefined();
    expect(Object.keys(rows).filter((id) => id.startsWith('crash@kv.incr') || id.startsWith('crash@kv.get')).every((id) => !id.includes('#'))).toBe(true);
    // Each reach row sits right after its first-reach row.
    const ids = r.coverage!.rows.map((x) => x.id);
    expect(ids.slice(ids.indexOf('crash@kv.set: answer lost'), ids.indexOf('crash@kv.set: answer lost') + 3)).toEqual(['crash@kv.set: answer lost', 'crash@kv.set: answer lost#2', 'crash@kv.set: answer lost#3']);
  }, 60_000);

  it('a campaign long enough to strike it finds the bug there', async () => {
    const r = await runServiceCampaign({ def, module: 'answer-before-order', runs: 3000, seed: 1, faults: ['crash', 'loseResponse'] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.scenario.faults).toMatchObject({ crashAt: 'kv.set: answer lost', crashAtNth: 2 });
  }, 120_000);
});
