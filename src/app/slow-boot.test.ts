// An app whose factory awaits a timer before it returns its listener (a
// pool "connecting", a config fetched with a retry delay): requests that
// reach the process meanwhile all await the one app() promise, and their
// continuations ran in whichever request's turn settled it. A request
// delivered in another's turn sent its store commands to that request's
// queue, and once that one had answered nobody ran them: the check stopped
// with "the app kept working for 20000 turns without answering (a loop of
// immediates?)", exit 2 (found from the packed tarball: a Fastify app
// behind `await setTimeout(50)` from node:timers/promises, run 5 of seed 1).
import { describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { appService } from './define.js';
import type { AppDescriptor } from './descriptor.js';

const slowBoot: AppDescriptor = {
  name: 'slow-boot',
  app: async ({ redis }) => {
    await sleep(50);
    return async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req);
      const id = await redis.incr('seq');
      await redis.set(`order:${id}`, String(req.headers['idempotency-key']));
      res.statusCode = 201;
      res.end(JSON.stringify({ id }));
    };
  },
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId }) },
  effects: { noun: 'order', of: (kv, op) => kv.scan('order:').filter(([, v]) => v.startsWith(`${op.runId}:`)).map(([k]) => Number(k.slice('order:'.length))) },
};

describe('requests that reach a process while its app() is still booting', () => {
  it('are each delivered in their own turn once it is ready: both answered, each command on its own request', async () => {
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'two during boot', seed: 3, service: { module: 'slow-boot', instances: 1 },
      client: { keySource: 'tool_call' },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }, { id: 'op2', runId: 'r2', module: 'm', title: 't', workers: 1, startMs: 10 }],
      expect: {},
    }));
    const r = await runScenario(s, { service: appService(slowBoot), keepTrace: true });
    expect(r.reports).toEqual({ op1: 1, op2: 1 });
    expect(r.violations).toEqual([]);
    // Each request sent its own incr and set, under its own name.
    for (const who of ['s0/op1.w0#1', 's0/op2.w0#2']) {
      expect(r.trace.filter((l) => l.includes(` ${who} `)).map((l) => / (kv\.\w+)(?: |$)/.exec(l)?.[1]).filter((x) => x !== undefined)).toEqual(['kv.incr', 'kv.set']);
    }
  });
});
