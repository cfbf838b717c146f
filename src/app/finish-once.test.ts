// A response's 'finish' event fires once in Node. light-my-request, which
// delivers each request to a hosted app, emits it itself as `end()` returns,
// and Node's ServerResponse emits it again once its null socket's write
// callback runs — an immediate on the instance's clock that came due only
// at the instance's next turn, so the second 'finish' ran inside *another*
// request (or the timer task), and what its listener sent was traced as
// that request's command. Found with a home-made idempotency middleware
// that caches 2xx answers and releases the key on 'finish' otherwise: its
// release ran twice, the second time under the retry's name.
import { describe, expect, it } from 'vitest';
import express from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { loadScenario, parseScenario } from '../scenario/load.js';
import { loadService } from '../service/load.js';
import { runScenario } from '../scenario/run.js';
import { appService } from './define.js';
import type { AppDescriptor } from './descriptor.js';

const plain: AppDescriptor = {
  name: 'finish-counter',
  app: ({ redis }) => async (req: IncomingMessage, res: ServerResponse) => {
    for await (const _ of req);
    const id = await redis.incr('seq');
    // What a logging or release-on-finish middleware does: one store command per finished response.
    res.on('finish', () => void redis.incr(`finished:${id}`));
    await redis.set(`order:${id}`, String(req.headers['idempotency-key']));
    res.statusCode = 201;
    res.end(JSON.stringify({ id }));
  },
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId }) },
  effects: { noun: 'order', of: (kv) => kv.scan('order:').map(([k]) => Number(k.slice('order:'.length))) },
};

const onExpress: AppDescriptor = {
  ...plain,
  app: ({ redis }) => {
    const app = express();
    app.post('/orders', async (req, res) => {
      const id = await redis.incr('seq');
      res.on('finish', () => void redis.incr(`finished:${id}`));
      await redis.set(`order:${id}`, String(req.headers['idempotency-key']));
      res.status(201).json({ id });
    });
    return app;
  },
};

describe("a hosted app's response emits 'finish' once, in its own request", () => {
  it.each([['node:http', plain], ['Express', onExpress]])('%s, two requests one after the other: each finish listener runs once, and its command is on its own request', async (_, app) => {
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'two in a row', seed: 3, service: { module: 'finish-counter', instances: 1 },
      client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 2, staggerMs: 50 }], expect: {},
    }));
    let finished: Array<[string, string]> = [];
    const r = await runScenario(s, {
      service: appService(app),
      keepTrace: true,
      inspect: (db) => (finished = (db.prepare("SELECT key, value FROM retrysim_kv WHERE key LIKE 'finished:%' ORDER BY key").all() as Array<{ key: string; value: string }>).map((x) => [x.key, x.value])),
    });
    expect(finished).toEqual([['finished:1', '1'], ['finished:2', '1']]);
    // Each request sends incr (the id), set (the order), then incr (its finish): the second request's first command is its own.
    const commands = (who: string) => r.trace.filter((l) => l.includes(` ${who} `)).map((l) => / (kv\.\w+)(?: |$)/.exec(l)?.[1]).filter((x) => x !== undefined);
    expect(commands('s0/op1.w0#1')).toEqual(['kv.incr', 'kv.set', 'kv.incr']);
    expect(commands('s0/op1.w1#2')).toEqual(['kv.incr', 'kv.set', 'kv.incr']);
  });

  it("an Express app still answers through light-my-request's response (its Express detection, which the wrapper does for it): a recorded Express counterexample replays", async () => {
    const file = 'examples/app-node-idempotency/counterexamples/node-idempotency-exactly-one-7150c301.json';
    const s = loadScenario(file);
    const r = await runScenario(s, { service: await loadService('examples/app-node-idempotency/app.ts'), strictReplay: true });
    expect(r.violations.map((v) => v.invariant)).toEqual(s.expect!.violations);
  });
});
