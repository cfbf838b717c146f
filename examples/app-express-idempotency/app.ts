/**
 * An Express 5 app whose POST /orders is made idempotent by
 * `express-idempotency` (1.0.6), configured as its README documents: the
 * middleware in front of the route, the route asking `isHit(req)` before
 * doing anything and `reportError(req)` when it fails. The only addition is
 * the data adapter the README asks for in production (the default is in
 * process memory): `IIdempotencyDataAdapter` over a Redis client, in a few
 * lines, with `create` as an atomic `SET NX` (a second create of the same key
 * throws, as the library's own in-memory adapter does).
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { getSharedIdempotencyService, idempotency, type IIdempotencyDataAdapter, type IdempotencyResource } from 'express-idempotency';
import type { AppDescriptor, AppEnv } from 'retrysim';

type Redis = AppEnv['redis'];

/** express-idempotency's data adapter interface over a Redis client (node-redis's method names). */
export class RedisDataAdapter implements IIdempotencyDataAdapter {
  constructor(private readonly redis: Redis) {}
  async findByIdempotencyKey(key: string): Promise<IdempotencyResource | null> {
    const v = await this.redis.get(`idempotency:${key}`);
    return v === null ? null : (JSON.parse(v) as IdempotencyResource);
  }
  async create(resource: IdempotencyResource): Promise<void> {
    const ok = await this.redis.set(`idempotency:${resource.idempotencyKey}`, JSON.stringify(resource), { NX: true });
    if (ok === null) throw new Error('Duplicate');
  }
  async update(resource: IdempotencyResource): Promise<void> {
    await this.redis.set(`idempotency:${resource.idempotencyKey}`, JSON.stringify(resource));
  }
  async delete(key: string): Promise<void> {
    await this.redis.del(`idempotency:${key}`);
  }
}

export function createApp({ redis }: AppEnv) {
  const app = express();
  app.use(express.json());
  app.post('/orders', idempotency({ dataAdapter: new RedisDataAdapter(redis) }), async (req: Request, res: Response, next: NextFunction) => {
    const service = getSharedIdempotencyService();
    if (service.isHit(req)) return;
    try {
      const tenant = String(req.headers['x-tenant'] ?? 'default');
      const { order, item } = req.body as { order?: unknown; item?: unknown };
      if (typeof order !== 'string' || typeof item !== 'string') {
        res.status(400).json({ error: 'expected {order: string, item: string}' });
        return;
      }
      const id = await redis.incr('orders:seq');
      await redis.set(`order:${id}`, JSON.stringify({ id, order, tenant, item }));
      res.status(201).json({ id });
    } catch (e) {
      await service.reportError(req).catch(() => undefined);
      next(e);
    }
  });
  return app;
}

export default {
  name: 'express-idempotency',
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
} satisfies AppDescriptor;
