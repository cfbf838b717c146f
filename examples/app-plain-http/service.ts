/**
 * app.ts written the other way: the same check-then-insert as a
 * ServiceDefinition, with the store commands spelled as `sim.step`s (one
 * per command, with the same labels, crash points and footprints the app
 * host gives the hosted app) over the same table. It exists to hold the two
 * paths against each other: the same generated cases must give the same
 * verdicts and the same minimal counterexample (src/app/parity.test.ts).
 */
import type { ServiceDefinition, ServiceSim } from 'retrysim';

// The hosted app's steps, in the host's order (src/kv/client.ts KV_COMMANDS): the generator draws from this list.
const COMMANDS = ['set', 'get', 'del', 'incr', 'pexpire', 'pttl', 'putIf', 'exec', 'watch'];

/** One store command: an interleaving point, the command, then the point where its answer may be lost. */
async function command<T>(sim: ServiceSim, name: string, keys: string[], write: boolean, run: () => T): Promise<T> {
  const fp = keys.map((k) => `kv:${k}`);
  const mem = `app:${sim.instance}`;
  await sim.step(`kv.${name}`, write ? { writes: [...fp, mem] } : { reads: fp, writes: [mem] });
  const value = run();
  sim.crashPoint(`kv.${name}: answer lost`);
  return value;
}

const get = (sim: ServiceSim, key: string) => command(sim, 'get', [key], false, () => (sim.db.prepare('SELECT value FROM retrysim_kv WHERE key = ?').pluck().get(key) as string | undefined) ?? null);
const set = (sim: ServiceSim, key: string, value: string) => command(sim, 'set', [key], true, () => void sim.db.prepare('INSERT INTO retrysim_kv (key, value, expires_at) VALUES (?, ?, NULL) ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = NULL').run(key, value));
const incr = (sim: ServiceSim, key: string) => command(sim, 'incr', [key], true, () => {
  const n = Number((sim.db.prepare('SELECT value FROM retrysim_kv WHERE key = ?').pluck().get(key) as string | undefined) ?? 0) + 1;
  sim.db.prepare('INSERT INTO retrysim_kv (key, value, expires_at) VALUES (?, ?, NULL) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, String(n));
  return n;
});

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({ status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

function orders(db: ServiceSim['db']): Array<{ id: number; order: string; tenant: string }> {
  return (db.prepare("SELECT value FROM retrysim_kv WHERE substr(key, 1, 6) = 'order:' ORDER BY key").pluck().all() as string[]).map((v) => JSON.parse(v));
}

export default {
  name: 'orders-check-then-insert-sd',
  tables: ['retrysim_kv'],
  setup: (db) => db.exec('CREATE TABLE retrysim_kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at REAL)'),
  steps: COMMANDS.map((c) => `kv.${c}`),
  crashPoints: COMMANDS.map((c) => `kv.${c}: answer lost`),
  slowStep: 'kv.set',
  operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId, item: op.title }) },
  effects: {
    noun: 'order',
    of: (db, op) => orders(db).filter((o) => o.order === op.runId && o.tenant === op.tenant).map((o) => o.id).sort((a, b) => a - b),
    owner: (db, id) => {
      const o = orders(db).find((x) => x.id === id);
      return o === undefined ? undefined : { runId: o.order, tenant: o.tenant };
    },
    total: (db) => orders(db).length,
  },
  async handle(req, sim) {
    if (req.method !== 'POST' || req.path !== '/orders') return json(404, { error: 'not found' });
    const tenant = req.headers['x-tenant'] ?? 'default';
    const key = req.headers['idempotency-key'];
    if (key === undefined) return json(400, { error: 'Idempotency-Key header required' });
    let input: { order?: unknown; item?: unknown };
    try {
      input = JSON.parse(req.body);
    } catch {
      return json(400, { error: 'malformed JSON' });
    }
    if (typeof input.order !== 'string' || typeof input.item !== 'string') return json(400, { error: 'expected {order: string, item: string}' });
    const idem = `idem:${JSON.stringify([tenant, key])}`;
    const seen = await get(sim, idem);
    if (seen !== null) {
      const s = JSON.parse(seen) as { body: string; answer: unknown };
      if (s.body !== req.body) return json(422, { error: 'Idempotency-Key reused with a different body' });
      return json(201, s.answer, { 'idempotent-replay': 'true' });
    }
    const id = await incr(sim, 'orders:seq');
    await set(sim, `order:${id}`, JSON.stringify({ id, order: input.order, tenant, item: input.item }));
    await set(sim, idem, JSON.stringify({ body: req.body, answer: { id } }));
    return json(201, { id });
  },
} satisfies ServiceDefinition;
