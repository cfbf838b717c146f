/**
 * An Express 5 app whose POST /orders uses `@node-idempotency/core`
 * (1.0.11) directly, the way its README shows for a framework without a
 * wrapper (the `@node-idempotency/express` middleware is not on the
 * registry): `onRequest` before the business logic (a cached answer is sent
 * back; an IdempotencyError is mapped to a status), `onResponse` with the
 * body — or, on failure, the error — once the logic completes. Storage: the
 * library's `StorageAdapter` over a Redis client, in the same few lines as
 * its own `storage-adapter-redis` (`SET NX PX` for `setIfNotExists`).
 * Options: the defaults (`cacheTTLMS` 24 h, `inProgressStrategy.wait` false).
 */
import express from 'express';
import { Idempotency, IdempotencyError } from '@node-idempotency/core';
import type { StorageAdapter } from '@node-idempotency/storage';
import type { AppDescriptor, AppEnv } from 'retrysim';

type Redis = AppEnv['redis'];

/** node-idempotency's StorageAdapter over a Redis client, as its Redis adapter writes it. */
export class RedisStorageAdapter implements StorageAdapter {
  constructor(private readonly redis: Redis) {}
  async setIfNotExists(key: string, val: string, { ttl }: { ttl?: number } = {}): Promise<boolean> {
    return (await this.redis.set(key, val, { NX: true, PX: ttl })) !== null;
  }
  async set(key: string, val: string, { ttl }: { ttl?: number }): Promise<void> {
    await this.redis.set(key, val, { PX: ttl });
  }
  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(key)) ?? undefined;
  }
}

export function createApp({ redis }: AppEnv) {
  const idempotency = new Idempotency(new RedisStorageAdapter(redis));
  const app = express();
  app.use(express.json());
  app.post('/orders', async (req, res) => {
    const params = { method: 'POST', headers: req.headers as Record<string, unknown>, body: req.body as Record<string, unknown>, path: '/orders' };
    try {
      const cached = await idempotency.onRequest<{ id: number }, { message: string }>(params);
      if (cached !== undefined) {
        const status = Number(cached.additional?.status ?? (cached.error ? 500 : 200));
        res.status(status).json(cached.error ?? cached.body);
        return;
      }
    } catch (e) {
      if (e instanceof IdempotencyError) {
        const status = e.code === 'REQUEST_IN_PROGRESS' ? 409 : e.code === 'IDEMPOTENCY_FINGERPRINT_MISSMATCH' ? 422 : 400;
        res.status(status).json({ error: e.message });
      } else res.status(500).json({ error: 'internal error' });
      return;
    }
    try {
      const tenant = String(req.headers['x-tenant'] ?? 'default');
      const { order, item } = req.body as { order: string; item: string };
      const id = await redis.incr('orders:seq');
      await redis.set(`order:${id}`, JSON.stringify({ id, order, tenant, item }));
      await idempotency.onResponse(params, { body: { id }, additional: { status: 201 } });
      res.status(201).json({ id });
    } catch (e) {
      await idempotency.onResponse(params, { error: { message: (e as Error).message }, additional: { status: 500 } }).catch(() => undefined);
      res.status(500).json({ error: 'internal error' });
    }
  });
  return app;
}

export default {
  name: 'node-idempotency',
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
