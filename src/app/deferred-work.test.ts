// Work a hosted app defers past its answer (202 Accepted, then a timer
// writes the effect) must run on virtual time even when no later request
// reaches the instance: in Node the process's timer fires 200 ms later. Until
// 2026-12 an app's timers fired only inside a later request's turns, so with
// no faults at all the campaign read "fails" (the acknowledged id "does not
// exist"). A kill before the timer still loses the work (a dead process's
// timers never fire): that failure is real and must still be found.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import { appService } from './define.js';
import type { AppEnv } from './descriptor.js';

function app(repeat: boolean) {
  return ({ redis }: AppEnv) => {
    const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      let text = '';
      for await (const c of req) text += String(c);
      const tenant = String(req.headers['x-tenant'] ?? 'default');
      const idem = `idem:${tenant}:${String(req.headers['idempotency-key'])}`;
      const prev = await redis.get(idem);
      const send = (st: number, o: unknown) => (res.writeHead(st, { 'content-type': 'application/json' }), res.end(JSON.stringify(o)));
      if (prev !== null) return void send(202, { id: (JSON.parse(prev) as { id: number }).id });
      const id = await redis.incr('seq');
      if ((await redis.set(idem, JSON.stringify({ id }), { NX: true })) === null) return void send(409, { error: 'busy' });
      send(202, { id });
      const { order } = JSON.parse(text) as { order: string };
      setTimeout(() => void redis.set(`order:${id}`, JSON.stringify({ id, order, tenant })).catch(() => undefined), 200);
      // A self-rearming poller left behind: must not keep a run going for ever.
      if (repeat) {
        const tick = () => setTimeout(tick, 1000);
        tick();
      }
    };
    return (req: IncomingMessage, res: ServerResponse) => void handle(req, res).catch(() => (res.statusCode = 500, res.end()));
  };
}

const service = (repeat: boolean) => appService({
  name: 'accepted-later',
  app: app(repeat),
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
  effects: {
    noun: 'order',
    of: (kv, op) => kv.scan('order:').map(([, v]) => JSON.parse(v) as { id: number; order: string; tenant: string }).filter((o) => o.order === op.runId && o.tenant === op.tenant).map((o) => o.id),
    owner: (kv, id) => {
      const v = kv.get(`order:${id}`);
      if (v === null) return undefined;
      const o = JSON.parse(v) as { order: string; tenant: string };
      return { runId: o.order, tenant: o.tenant };
    },
  },
});

describe('a hosted app that answers 202 and finishes the work from a timer', () => {
  it('holds while nothing kills the process (the timer fires after the last request)', async () => {
    const r = await runServiceCampaign({ def: service(false), module: 'deferred', runs: 40, seed: 1, faults: ['loseResponse', 'concurrency'] });

    expect(r.verdict).toBe('holds');
  }, 60_000);

  it('a timer that re-arms itself after the run does not keep it going', async () => {
    const r = await runServiceCampaign({ def: service(true), module: 'deferred', runs: 20, seed: 1, faults: ['loseResponse'] });

    expect(r.verdict).toBe('holds');
  }, 60_000);

  it('fails id-exists when a kill lands between the answer and the timer', async () => {
    const r = await runServiceCampaign({ def: service(false), module: 'deferred', runs: 300, seed: 1, faults: ['kill'] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((v) => v.invariant)).toContain('id-exists');
  }, 60_000);
});
