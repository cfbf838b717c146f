/**
 * A plain `node:http` handler for POST /orders with an Idempotency-Key,
 * written the way it usually is the first time: *check* whether the key was
 * seen (GET), and if not, *insert* the order and remember the key (SET).
 * Nothing in it knows about retrysim: it takes its Redis client as a
 * parameter, as a testable app does. The bug: two requests with the same key
 * can both pass the check before either remembers the key — the race every
 * idempotency library exists to close.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppDescriptor, AppEnv } from 'retrysim';

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

/** The app, as production builds it with `createClient()` from `redis`. */
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
    const idem = `idem:${JSON.stringify([tenant, key])}`;
    // Check ...
    const seen = await redis.get(idem);
    if (seen !== null) {
      const s = JSON.parse(seen) as { body: string; answer: unknown };
      if (s.body !== text) return send(res, 422, { error: 'Idempotency-Key reused with a different body' });
      return send(res, 201, s.answer, { 'idempotent-replay': 'true' });
    }
    // ... then insert: another request with the same key may be right here too.
    const id = await redis.incr('orders:seq');
    await redis.set(`order:${id}`, JSON.stringify({ id, order: input.order, tenant, item: input.item }));
    await redis.set(idem, JSON.stringify({ body: text, answer: { id } }));
    send(res, 201, { id });
  };
  return (req: IncomingMessage, res: ServerResponse): void => {
    // A store error (a lost connection) is a 500, as any framework would answer it.
    createOrder(req, res).catch(() => send(res, 500, { error: 'internal error' }));
  };
}

/** The orders of one logical operation: every `order:<id>` whose order and tenant are the operation's. */
export function ordersOf(kv: { scan(prefix: string): Array<[string, string]> }, op: { runId: string; tenant: string }): number[] {
  return kv.scan('order:')
    .map(([, v]) => JSON.parse(v) as { id: number; order: string; tenant: string })
    .filter((o) => o.order === op.runId && o.tenant === op.tenant)
    .map((o) => o.id)
    .sort((a, b) => a - b);
}

export default {
  name: 'orders-check-then-insert',
  app: createApp,
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
  effects: {
    noun: 'order',
    of: ordersOf,
    owner: (kv, id) => {
      const v = kv.get(`order:${id}`);
      if (v === null) return undefined;
      const o = JSON.parse(v) as { order: string; tenant: string };
      return { runId: o.order, tenant: o.tenant };
    },
    total: (kv) => kv.scan('order:').length,
  },
} satisfies AppDescriptor;
