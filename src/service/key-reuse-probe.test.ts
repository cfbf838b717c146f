// The key-reuse probe sends a key that already succeeded once more with the
// operation's title edited: a different body, which the service must refuse.
// A service whose body does not carry the title (an order made of its
// reference only) got the very same bytes again — a plain retry, rightly
// accepted — and was reported "a different body was accepted" (found by an
// outside check with such a service). The probe is now left out for it.
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import { bodyIgnoresTitle, parseServiceFaults, serviceFaults } from './campaign.js';
import type { ServiceDefinition } from './definition.js';

/** Orders keyed by idempotency key, answers replayed; the body is `{ref}` only, or `{ref, note}` with the title. */
function orders(withTitle: boolean): ServiceDefinition {
  return {
    name: withTitle ? 'orders-titled' : 'orders-ref-only',
    tables: ['orders', 'keys'],
    setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT, tenant TEXT); CREATE TABLE keys (key TEXT PRIMARY KEY, answer TEXT)'),
    steps: ['write'],
    operation: { path: '/orders', body: (op) => JSON.stringify(withTitle ? { ref: op.runId, note: op.title } : { ref: op.runId }) },
    effects: { noun: 'order', of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
    async handle(req, sim) {
      await sim.step('write');
      const tenant = req.headers['x-tenant'] ?? 'default';
      const key = `${tenant}/${req.headers['idempotency-key']}`;
      // No fingerprint of the body: a reuse with another body is replayed (the bug the probe is for).
      return sim.db.transaction(() => {
        const seen = sim.db.prepare('SELECT answer FROM keys WHERE key = ?').pluck().get(key) as string | undefined;
        if (seen !== undefined) return { status: 201, body: seen };
        const id = Number(sim.db.prepare('INSERT INTO orders (ref, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { ref: string }).ref, tenant).lastInsertRowid);
        sim.db.prepare('INSERT INTO keys (key, answer) VALUES (?, ?)').run(key, JSON.stringify({ id }));
        return { status: 201, body: JSON.stringify({ id }) };
      }).immediate();
    },
  };
}

const probing = (def: ServiceDefinition) => parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'probe', seed: 1, service: { module: def.name },
  client: { keySource: 'tool_call', timeoutMs: 1_000, keyReuseProbe: true },
  operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
}));

describe('the key-reuse probe needs a body that changes with the title', () => {
  it('a body without the title: no probe in the fault space, and --faults keyReuseProbe says why', () => {
    const def = orders(false);
    expect(bodyIgnoresTitle(def)).toBe(true);
    expect(serviceFaults(def)).not.toContain('keyReuseProbe');
    expect(() => parseServiceFaults(def, 'keyReuseProbe')).toThrow(/unknown fault 'keyReuseProbe' \(service orders-ref-only's operation\.body does not use op\.title, which is what the probe changes\)/);
  });

  it('a body with the title keeps the probe, and it still catches a service that replays another body', async () => {
    const def = orders(true);
    expect(bodyIgnoresTitle(def)).toBe(false);
    expect(serviceFaults(def)).toContain('keyReuseProbe');
    const r = await runScenario(probing(def), { service: def });
    expect(r.violations.map((v) => v.invariant)).toEqual(['key-reuse']);
  });

  it('a scenario file asking for the probe on a body without the title sends nothing more and judges nothing', async () => {
    const def = orders(false);
    const r = await runScenario(probing(def), { service: def, keepTrace: true });
    expect(r.violations).toEqual([]);
    expect(r.trace.filter((l) => /spawn/.test(l) && /s0\//.test(l))).toHaveLength(1); // one request: the probe was not sent
  });
});

describe('the key-reuse probe on the trace', () => {
  it('is announced on its worker\'s line before the request it sends, so the reader knows why the worker sends again after its success', async () => {
    const def = orders(true);
    const r = await runScenario(probing(def), { service: def, keepTrace: true });
    const trace = r.trace.map(String);
    const at = trace.findIndex((l) => /op1\.w0\s+key-reuse probe: key '[^']+' sent again with another body \(title 't \(edited\)'\), once: it must be refused$/.test(l));
    expect(at).toBeGreaterThan(-1);
    const probeSpawn = trace.findIndex((l) => /s0\/op1\.w0#2\s+spawn/.test(l));
    expect(at).toBeLessThan(probeSpawn);
  });
});
