/**
 * A Fastify 5 app whose POST /orders is made idempotent the way a small
 * Fastify plugin usually does it — hooks around the route, state in Redis:
 *
 * - `preHandler` claims the key with `SET idem:<key> started NX PX 10000`
 *   (a lock that expires, so a crashed request cannot hold the key
 *   forever). If the key is taken, a finished request is replayed and a
 *   running one answers 409, for the client to retry later.
 * - `onSend` stores the answer under the key, for the replays.
 *
 * Nothing in it knows about retrysim: it gets its Redis client as a
 * parameter, as a testable app does, and returns Fastify's request
 * listener (`app.routing`) once the app is ready. What retrysim finds is in
 * README.md.
 */
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppDescriptor, AppEnv } from 'retrysim';

/** How long a claimed key stays locked: "longer than any request takes". */
export const LOCK_MS = 10_000;

interface Stored {
  state: 'started' | 'done';
  body: string;
  status?: number;
  answer?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    idemKey?: string;
  }
}

export async function createApp({ redis }: AppEnv) {
  const app = Fastify({ logger: false });

  app.addHook('preHandler', async (req: FastifyRequest, reply: FastifyReply) => {
    const key = req.headers['idempotency-key'];
    if (req.method !== 'POST' || typeof key !== 'string') return;
    const tenant = String(req.headers['x-tenant'] ?? 'default');
    const idem = `idem:${JSON.stringify([tenant, key])}`;
    const body = JSON.stringify(req.body);
    const claimed = await redis.set(idem, JSON.stringify({ state: 'started', body } satisfies Stored), { NX: true, PX: LOCK_MS });
    if (claimed !== null) {
      req.idemKey = idem;
      return;
    }
    const seen = await redis.get(idem);
    const s = seen === null ? undefined : (JSON.parse(seen) as Stored);
    if (s !== undefined && s.body !== body) return reply.code(422).send({ error: 'Idempotency-Key reused with a different body' });
    if (s?.state === 'done') return reply.code(s.status!).header('content-type', 'application/json').header('idempotent-replay', 'true').send(s.answer);
    return reply.code(409).header('retry-after', '1').send({ error: 'a request with this Idempotency-Key is in progress' });
  });

  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (req.idemKey !== undefined && reply.statusCode < 500) {
      const stored: Stored = { state: 'done', body: JSON.stringify(req.body), status: reply.statusCode, answer: String(payload) };
      await redis.set(req.idemKey, JSON.stringify(stored));
    }
    return payload;
  });

  app.post('/orders', async (req, reply) => {
    const tenant = String(req.headers['x-tenant'] ?? 'default');
    const { order, item } = (req.body ?? {}) as { order?: unknown; item?: unknown };
    if (typeof order !== 'string' || typeof item !== 'string') return reply.code(400).send({ error: 'expected {order: string, item: string}' });
    const id = await redis.incr('orders:seq');
    await redis.set(`order:${id}`, JSON.stringify({ id, order, tenant, item }));
    return reply.code(201).send({ id });
  });

  app.get('/orders', async (req) => {
    const q = req.query as { order?: string };
    const tenant = String(req.headers['x-tenant'] ?? 'default');
    const ids: number[] = [];
    const n = Number((await redis.get('orders:seq')) ?? 0);
    for (let id = 1; id <= n; id++) {
      const v = await redis.get(`order:${id}`);
      if (v === null) continue;
      const o = JSON.parse(v) as { order: string; tenant: string };
      if (o.order === q.order && o.tenant === tenant) ids.push(id);
    }
    return { orders: ids };
  });

  await app.ready();
  return app.routing;
}

export default {
  name: 'fastify-orders',
  app: createApp,
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
  effects: {
    noun: 'order',
    of: (kv, op) => kv.scan('order:').map(([, v]) => JSON.parse(v) as { id: number; order: string; tenant: string }).filter((o) => o.order === op.runId && o.tenant === op.tenant).map((o) => o.id).sort((a, b) => a - b),
    owner: (kv, id) => {
      const v = kv.get(`order:${id}`);
      if (v === null) return undefined;
      const o = JSON.parse(v) as { order: string; tenant: string };
      return { runId: o.order, tenant: o.tenant };
    },
    total: (kv) => kv.scan('order:').length,
  },
  // Opt in to invariant 5: after the faults stop and the lock has expired, a retried order must get through.
  progress: {
    settleMs: LOCK_MS,
    leased: true,
    query: (op) => ({ path: `/orders?order=${encodeURIComponent(op.runId)}` }),
    found: (status, body) => status === 200 && (JSON.parse(body) as { orders: number[] }).orders.length > 0,
  },
} satisfies AppDescriptor;
