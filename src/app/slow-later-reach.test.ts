import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseScenario, ScenarioError } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { scenarioArbitrary } from '../scenario/arbitraries.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';
import { Reached } from '../service/reached.js';

/**
 * A claim that expires: `SET NX PX 500`, then the order (`INCR`, `SET`),
 * then the stored answer (`SET`, no expiry). The bug: a lock shorter than
 * the work it guards. Slow before the claim (the request's 1st `kv.set`)
 * is harmless — whichever request claims first finishes well within the
 * lock and leaves its answer. Slow before the order (its 2nd `kv.set`) runs
 * past the lock: the retry claims the expired key and makes a second order.
 */
const shortLock: AppDescriptor = {
  name: 'short-lock',
  app: ({ redis }) => async (req, res) => {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const order = (JSON.parse(body) as { order: string }).order;
    const tenant = String(req.headers['x-tenant'] ?? 'default');
    const slot = `idem:${tenant}:${String(req.headers['idempotency-key'])}`;
    if ((await redis.set(slot, 'pending', { NX: true, PX: 500 })) === null) {
      const v = await redis.get(slot);
      res.statusCode = v === 'pending' || v === null ? 409 : 201;
      res.end(v === 'pending' || v === null ? '{"error":"in progress"}' : v);
      return;
    }
    const id = await redis.incr('seq');
    await redis.set(`order:${id}`, JSON.stringify([tenant, order]));
    const answer = JSON.stringify({ id });
    await redis.set(slot, answer);
    res.statusCode = 201;
    res.end(answer);
  },
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId }) },
  effects: { noun: 'order', of: (kv, op) => kv.scan('order:').filter(([, v]) => v === JSON.stringify([op.tenant, op.runId])).map(([k]) => Number(k.slice('order:'.length))) },
};

function slowAt(faults: object): ReturnType<typeof parseScenario> {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'slow order', seed: 1, service: { module: 'short-lock', instances: 1 },
    client: { keySource: 'tool_call', maxAttempts: 3, timeoutMs: 1000 },
    faults,
    operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
  }));
}

describe('the slow fault at a later reach of its step (faults.slowAtStepNth)', () => {
  const def = appService(shortLock);

  it('slow before the claim (1st kv.set) is harmless; slow before the order (2nd) outlives the lock and makes a second order', async () => {
    const first = await runScenario(slowAt({ slowMs: 1500, slowAtStep: 'kv.set' }), { service: def, keepTrace: true });
    expect(first.violations).toEqual([]);
    expect(first.reports.op1).toBe(1);
    expect(first.trace.join('\n')).toMatch(/slow 1500 ms after 'kv\.set'$/m);
    const second = await runScenario(slowAt({ slowMs: 1500, slowAtStep: 'kv.set', slowAtStepNth: 2 }), { service: def, keepTrace: true });
    expect(second.violations.map((v) => v.invariant)).toContain('exactly-one');
    expect(second.reports.op1).toBe(2);
    expect(second.trace.join('\n')).toMatch(/slow 1500 ms after 'kv\.set' \(its 2nd reach in this request\)/);
    // The coverage row of faults at a later reach counts it (the first reach is not one).
    const reached = (faults: object) => {
      const r = new Reached();
      return runScenario(slowAt(faults), { service: def, reached: r }).then(() => r.ids);
    };
    expect(await reached({ slowMs: 1500, slowAtStep: 'kv.set', slowAtStepNth: 2 })).toContain('fault:later-reach');
    expect(await reached({ slowMs: 1500, slowAtStep: 'kv.set' })).not.toContain('fault:later-reach');
    // Once per request, at the n-th reach only: no request reaches kv.set a 4th time, so nothing is slow.
    const none = await runScenario(slowAt({ slowMs: 1500, slowAtStep: 'kv.set', slowAtStepNth: 4 }), { service: def, keepTrace: true });
    expect(none.trace.join('\n')).not.toMatch(/slow 1500/);
    expect(none.reports.op1).toBe(1);
  });

  it('a file with slowAtStepNth but no slowAtStep, or a reach that is not 1–16, is refused by path', () => {
    expect(() => slowAt({ slowMs: 100, slowAtStepNth: 2 })).toThrow(/at faults\.slowAtStepNth: counts the reaches of faults\.slowAtStep, which is not given/);
    for (const bad of [0, 1.5, 17, '2']) {
      expect(() => slowAt({ slowMs: 100, slowAtStep: 'kv.set', slowAtStepNth: bad })).toThrow(ScenarioError);
      expect(() => slowAt({ slowMs: 100, slowAtStep: 'kv.set', slowAtStepNth: bad })).toThrow(/at faults\.slowAtStepNth: /);
    }
  });

  it('is generated for a user service only, and only with the slow fault', () => {
    const cases = (o: Parameters<typeof scenarioArbitrary>[0]) => fc.sample(scenarioArbitrary(o), { numRuns: 400, seed: 7 }).map((c) => c.scenario.faults);
    const service = { module: 'short-lock', steps: def.steps, crashPoints: def.crashPoints };
    const user = cases({ service, keySource: 'tool_call', faults: ['slow'] } as never);
    const nths = user.map((f) => f.slowAtStepNth).filter((n) => n !== undefined);
    expect(nths.length).toBeGreaterThan(0);
    expect(nths.every((n) => n! >= 2 && n! <= 4)).toBe(true);
    // Only beside the step it counts.
    expect(user.every((f) => f.slowAtStepNth === undefined || (f.slowAtStep !== undefined && f.slowMs > 0))).toBe(true);
    expect(cases({ service, keySource: 'tool_call', faults: ['crash', 'pause', 'kill'] } as never).every((f) => f.slowAtStepNth === undefined)).toBe(true);
    expect(cases({ variant: 'key_atomic', keySource: 'tool_call', faults: ['slow'] } as never).every((f) => f.slowAtStepNth === undefined)).toBe(true);
  });
});
