/**
 * A Lambda-style handler made idempotent with
 * `@aws-lambda-powertools/idempotency` (2.35.0), served behind an HTTP
 * endpoint (Express 5), with the Redis/Valkey persistence layer
 * (`CachePersistenceLayer`), which takes any connected node-redis-shaped
 * client: here the simulated store's. Configuration, as documented:
 *
 * - `eventKeyJmesPath: '[headers."x-tenant", headers."idempotency-key"]'`:
 *   the key is the tenant and the Idempotency-Key header;
 * - `payloadValidationJmesPath: 'body'`: the same key with another body is
 *   refused (IdempotencyValidationError → 422);
 * - `expiresAfterSeconds`: the default (3600);
 * - the handler is called with a Lambda-shaped context whose
 *   `getRemainingTimeInMillis()` counts down from a 30 s function timeout
 *   (`FUNCTION_TIMEOUT_MS`): Powertools registers it and writes the
 *   in-progress record with that expiry, as it does in Lambda.
 *
 * It opts in to progress (invariant 5) through a read endpoint,
 * GET /orders?order=..., which the recovery phase queries.
 */
import express from 'express';
import { IdempotencyConfig, makeIdempotent } from '@aws-lambda-powertools/idempotency';
import { CachePersistenceLayer } from '@aws-lambda-powertools/idempotency/cache';
import type { CacheClient } from '@aws-lambda-powertools/idempotency/cache/types';
import type { AppDescriptor, AppEnv } from 'retrysim';

/** The function timeout the context counts down from (Lambda's maximum behind API Gateway is 29 s; its default is 3 s). */
export const FUNCTION_TIMEOUT_MS = 30_000;

interface HttpEvent {
  headers: Record<string, string | undefined>;
  body: string;
}

export function createApp({ redis }: AppEnv, o: { lambdaContext?: boolean } = {}) {
  const withContext = o.lambdaContext ?? true;
  const persistenceStore = new CachePersistenceLayer({ client: redis as unknown as CacheClient });
  const config = new IdempotencyConfig({
    eventKeyJmesPath: '[headers."x-tenant", headers."idempotency-key"]',
    payloadValidationJmesPath: 'body',
  });
  const handler = makeIdempotent(async (event: HttpEvent, _context: unknown) => {
    const { order, item } = JSON.parse(event.body) as { order: string; item: string };
    const tenant = event.headers['x-tenant'] ?? 'default';
    const id = await redis.incr('orders:seq');
    await redis.set(`order:${id}`, JSON.stringify({ id, order, tenant, item }));
    // The lookup by the caller's order reference (GET /orders?order=...).
    await redis.set(`order-ref:${JSON.stringify([tenant, order])}`, String(id));
    return { statusCode: 201, body: JSON.stringify({ id }) };
  }, { persistenceStore, config });

  const app = express();
  app.use(express.text({ type: '*/*' }));
  app.get('/orders', async (req, res) => {
    const tenant = String(req.headers['x-tenant'] ?? 'default');
    const id = await redis.get(`order-ref:${JSON.stringify([tenant, String(req.query.order)])}`);
    if (id === null) res.status(404).json({ error: 'no such order' });
    else res.status(200).json({ id: Number(id) });
  });
  app.post('/orders', async (req, res) => {
    const started = Date.now();
    const context = { functionName: 'orders', awsRequestId: crypto.randomUUID(), getRemainingTimeInMillis: () => FUNCTION_TIMEOUT_MS - (Date.now() - started) };
    const headers = { 'x-tenant': 'default', ...(req.headers as Record<string, string>) };
    try {
      // Without a context, makeIdempotent wraps a plain function: no in-progress expiry is registered.
      const r = withContext ? await handler({ headers, body: String(req.body) }, context) : await handler({ headers, body: String(req.body) }, undefined);
      res.status(r.statusCode).type('application/json').send(r.body);
    } catch (e) {
      const name = (e as Error).name;
      if (name === 'IdempotencyAlreadyInProgressError') res.status(409).json({ error: 'in progress' });
      else if (name === 'IdempotencyValidationError') res.status(422).json({ error: 'Idempotency-Key reused with a different body' });
      else res.status(500).json({ error: 'internal error' });
    }
  });
  return app;
}

export default {
  name: 'powertools-idempotency',
  app: (env) => createApp(env),
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
  // Invariant 5: once the faults stop and every in-progress record has expired
  // (the function timeout), an operation that never succeeded asks GET /orders
  // and resubmits until it does.
  progress: {
    settleMs: FUNCTION_TIMEOUT_MS + 1_000,
    leased: false,
    query: (op) => ({ path: `/orders?order=${encodeURIComponent(op.runId)}` }),
    found: (status) => status === 200,
  },
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
