import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { runServiceCampaign } from '../service/campaign.js';
import { ServiceError } from '../service/errors.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';

/**
 * An app that coalesces duplicates in process (a single flight): the first
 * request with a key does the work, a concurrent duplicate on the same
 * process awaits the first one's promise. Node runs that fine; the host must
 * let the waiting request sleep until another request of its process moves,
 * not call it an app that waits on nothing.
 */
function singleFlight(joined: { n: number }): AppDescriptor {
  return {
    name: 'single-flight',
    app: ({ redis }) => {
      const inFlight = new Map<string, Promise<string>>();
      return async (req, res) => {
        let body = '';
        for await (const chunk of req) body += String(chunk);
        const order = (JSON.parse(body) as { order: string }).order;
        const key = JSON.stringify([req.headers['x-tenant'], req.headers['idempotency-key']]);
        let p = inFlight.get(key);
        if (p === undefined) {
          p = (async () => {
            const id = await redis.incr('seq');
            await redis.set(`order:${id}`, order);
            return JSON.stringify({ id });
          })();
          inFlight.set(key, p);
        } else joined.n++;
        res.statusCode = 201;
        res.end(await p);
      };
    },
    operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
    effects: { noun: 'order', of: (kv, op) => kv.scan('order:').filter(([, v]) => v === op.runId).map(([k]) => Number(k.slice('order:'.length))) },
  };
}

function scenario(instances: number, seed: number): ReturnType<typeof parseScenario> {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'duplicates', seed, service: { module: 'single-flight', instances },
    client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2 }], expect: {},
  }));
}

describe('a hosted app whose request awaits another request of the same process', () => {
  it('runs as Node runs it: the duplicate waits for the first request and gets its answer (one order)', async () => {
    const joined = { n: 0 };
    const def = appService(singleFlight(joined));
    for (let seed = 1; seed <= 8; seed++) {
      const r = await runScenario(scenario(1, seed), { service: def });
      expect(r.violations, `seed ${seed}`).toEqual([]);
      expect(r.reports.op1, `seed ${seed}`).toBe(1);
    }
    // The waiting path ran: some duplicate joined an in-flight request.
    expect(joined.n).toBeGreaterThan(0);
  });

  it('is judged, not refused, by a campaign: one process holds; two processes (no shared flight) fail exactly-one', async () => {
    const def = appService(singleFlight({ n: 0 }));
    const one = await runServiceCampaign({ def, module: 'single-flight', runs: 60, seed: 1, faults: ['concurrency', 'threeWorkers'] });
    expect(one.verdict).toBe('holds');
    const two = await runServiceCampaign({ def, module: 'single-flight', runs: 60, seed: 1, faults: ['concurrency', 'instances'] });
    expect(two.verdict).toBe('fails');
    expect(two.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 60_000);

  it('with the slow fault too: two duplicates parked on the first request while it sleeps on virtual time (they woke each other for nothing, the kernel never moved on, and the app was called broken: "kept working for 20000 turns")', async () => {
    const def = appService(singleFlight({ n: 0 }));
    const one = await runServiceCampaign({ def, module: 'single-flight', runs: 120, seed: 1, faults: ['concurrency', 'threeWorkers', 'slow'] });
    expect(one.verdict).toBe('holds');
    const two = await runServiceCampaign({ def, module: 'single-flight', runs: 120, seed: 1, faults: ['concurrency', 'threeWorkers', 'slow', 'instances'] });
    expect(two.verdict).toBe('fails');
    expect(two.counterexample!.violations.map((v) => v.invariant)).toContain('exactly-one');
  }, 60_000);

  it('two requests that wait on a promise nobody resolves are still a broken app (one line naming it), not a hang', async () => {
    const def = appService({
      name: 'stuck-pair',
      app: ({ redis }) => {
        const never = new Promise<void>(() => undefined);
        return async (_req, res) => {
          await redis.incr('n');
          await never;
          res.end('{"id":1}');
        };
      },
      operation: { path: '/x', body: (op) => JSON.stringify({ op: op.runId }) },
      effects: { of: () => [] },
    });
    const r = runScenario(scenario(1, 1), { service: def });
    await expect(r).rejects.toThrow(ServiceError);
    await expect(runScenario(scenario(1, 1), { service: def })).rejects.toThrow(/never answered POST \/x/);
  });
});
