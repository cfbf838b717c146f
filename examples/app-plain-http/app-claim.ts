/**
 * The same `node:http` POST /orders, done right on a key-value store: the
 * key is *claimed* with one atomic `SET ... NX` before any work, so a
 * concurrent duplicate finds the claim and gets 409, a retry after a lost
 * answer gets the stored answer, and the same key with another body gets
 * 422. A live failure before the order is written frees the claim; once
 * the order write has been sent, the claim is kept even if its answer is
 * lost (the order may exist). The claim has no lease: a killed request's
 * key stays in progress (safety holds; progress after a kill would need a
 * lease *with fencing* — see examples/lease-without-fencing).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDescriptor, AppEnv } from 'retrysim';
import { ordersOf } from './app.js';

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

interface Claim {
  status: 'in_progress' | 'done';
  body: string;
  answer?: { id: number };
}

export function createApp({ redis }: AppEnv) {
  const createOrder = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method !== 'POST' || req.url !== '/orders') return send(res, 404, { error: 'not found' });
    const tenant = String(req.headers['x-tenant'] ?? 'default');
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string') return send(res, 400, { error: 'Idempotency-Key header required' });
    const text = await readBody(req);
    let input: { order?: unknown; item?: unknown };
    try {
      input = JSON.parse(text);
    } catch {
      return send(res, 400, { error: 'malformed JSON' });
    }
    if (typeof input.order !== 'string' || typeof input.item !== 'string') return send(res, 400, { error: 'expected {order: string, item: string}' });
    const scoped = JSON.stringify([tenant, key]);
    const idem = `idem:${scoped}`;
    const claimed = await redis.set(idem, JSON.stringify({ status: 'in_progress', body: text } satisfies Claim), { NX: true });
    if (claimed === null) {
      const seen = await redis.get(idem);
      if (seen === null) return send(res, 409, { error: 'retry: the key was just released' });
      const c = JSON.parse(seen) as Claim;
      if (c.body !== text) return send(res, 422, { error: 'Idempotency-Key reused with a different body' });
      if (c.status === 'done') return send(res, 201, c.answer, { 'idempotent-replay': 'true' });
      return send(res, 409, { error: 'a request with this key is in progress' });
    }
    let id: number;
    try {
      id = await redis.incr('orders:seq');
    } catch (e) {
      // Nothing was written for this key yet: free it, so a retry need not wait.
      await redis.del(idem).catch(() => undefined);
      throw e;
    }
    // From here on the order may exist: the claim is kept whatever happens.
    await redis.set(`order:${id}`, JSON.stringify({ id, order: input.order, tenant, item: input.item }));
    await redis.set(idem, JSON.stringify({ status: 'done', body: text, answer: { id } } satisfies Claim));
    send(res, 201, { id });
  };
  return (req: IncomingMessage, res: ServerResponse): void => {
    createOrder(req, res).catch(() => send(res, 500, { error: 'internal error' }));
  };
}

function byId(kv: { get(key: string): string | null }, id: number) {
  const v = kv.get(`order:${id}`);
  if (v === null) return undefined;
  const o = JSON.parse(v) as { order: string; tenant: string };
  return { runId: o.order, tenant: o.tenant };
}

export default {
  name: 'orders-claim',
  app: createApp,
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
  effects: { noun: 'order', of: ordersOf, owner: byId, total: (kv) => kv.scan('order:').length },
} satisfies AppDescriptor;
