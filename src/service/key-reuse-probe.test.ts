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
import { validateDefinition } from './validate.js';
import putByUrl, { unsaid } from './fixtures/put-by-url.js';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

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
    expect(() => parseServiceFaults(def, 'keyReuseProbe')).toThrow(/unknown fault 'keyReuseProbe' \(service orders-ref-only: operation\.body does not use op\.title, which is what the probe changes\)/);
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
    const at = trace.findIndex((l) => /op1\.w0\s+key-reuse probe: key '[^']+' sent again with another body \(title 't \(edited\)'\): it must be refused$/.test(l));
    expect(at).toBeGreaterThan(-1);
    const probeSpawn = trace.findIndex((l) => /s0\/op1\.w0#2\s+spawn/.test(l));
    expect(at).toBeLessThan(probeSpawn);
  });
});

// Found from the packed tarball with a service that validated the body by
// throwing: the reused key with another body was answered 500 and the
// campaign said "holds". A 500 is not a refusal: it tells the client to
// retry (SPEC §4), and the other body is neither done nor refused.
describe('a reused key with another body answered 5xx is not refused', () => {
  function ordersThatThrow(): ServiceDefinition {
    const def = orders(true);
    return {
      ...def,
      name: 'orders-assert-body',
      setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT, tenant TEXT); CREATE TABLE keys (key TEXT PRIMARY KEY, body TEXT, answer TEXT)'),
      async handle(req, sim) {
        await sim.step('write');
        const tenant = req.headers['x-tenant'] ?? 'default';
        const key = `${tenant}/${req.headers['idempotency-key']}`;
        return sim.db.transaction(() => {
          const seen = sim.db.prepare('SELECT body, answer FROM keys WHERE key = ?').get(key) as { body: string; answer: string } | undefined;
          if (seen !== undefined && seen.body !== req.body) throw new Error('idempotency key reused with another body');
          if (seen !== undefined) return { status: 201, headers: { 'idempotent-replay': 'true' }, body: seen.answer };
          const id = Number(sim.db.prepare('INSERT INTO orders (ref, tenant) VALUES (?, ?)').run((JSON.parse(req.body) as { ref: string }).ref, tenant).lastInsertRowid);
          sim.db.prepare('INSERT INTO keys (key, body, answer) VALUES (?, ?, ?)').run(key, req.body, JSON.stringify({ id }));
          return { status: 201, body: JSON.stringify({ id }) };
        }).immediate();
      },
    };
  }

  it('fails key-reuse, naming the status', async () => {
    const r = await runScenario(probing(ordersThatThrow()), { service: ordersThatThrow() });
    expect(r.violations).toEqual([{ invariant: 'key-reuse', op: 'op1', detail: "key 'r1:call-1' sent again with a different body was answered HTTP 500 each of the times it was sent, a server error a client retries, not a refusal (422)" }]);
  });

  it('a crash fault that strikes the probe is behind it once the probe is sent again: a service that refuses holds', async () => {
    // The crash point is reached only when the key is known, so the armed crash waits for the probe (as a
    // lost store answer struck app-plain-http/app-claim.ts's probe in run 88 of its campaign).
    const def = ordersThatThrow();
    const refusing: ServiceDefinition = {
      ...def,
      crashPoints: ['key-known'],
      async handle(req, sim) {
        const key = `${req.headers['x-tenant'] ?? 'default'}/${req.headers['idempotency-key']}`;
        const known = sim.db.prepare('SELECT body FROM keys WHERE key = ?').pluck().get(key) as string | undefined;
        if (known !== undefined && known !== req.body) {
          await sim.step('write');
          sim.crashPoint('key-known');
          return { status: 422, body: '{"error":"idempotency key reused with another body"}' };
        }
        return def.handle(req, sim);
      },
    };
    const s = probing(refusing);
    const r = await runScenario({ ...s, faults: { ...s.faults, crashMidRequest: 1, crashAt: 'key-known' } }, { service: refusing, keepTrace: true });
    expect(r.trace.some((l) => /crash at 'key-known'/.test(l))).toBe(true);
    expect(r.violations).toEqual([]);
  });

  it('the same service answering 422 holds', async () => {
    const def = ordersThatThrow();
    const refusing: ServiceDefinition = {
      ...def,
      async handle(req, sim) {
        try {
          return await def.handle(req, sim);
        } catch {
          return { status: 422, body: '{"error":"idempotency key reused with another body"}' };
        }
      },
    };
    const r = await runScenario(probing(refusing), { service: refusing });
    expect(r.violations).toEqual([]);
  });
});

// A service idempotent by its URL (PUT /orders/<ref>, the last write wins) reads no key and makes no promise
// about one sent again with another body: until 2026-12 it failed key-reuse at once, and the only way out was
// an eleven-name --faults list on every run. `operation.readsKey: false` says so in the definition.
describe('operation.readsKey: false leaves the probe out, and says so', () => {
  it('no probe in the fault space; --faults keyReuseProbe names the field; a readsKey that is not a boolean is one line', () => {
    expect(putByUrl.operation.readsKey).toBe(false);
    expect(serviceFaults(putByUrl)).not.toContain('keyReuseProbe');
    expect(serviceFaults(unsaid)).toContain('keyReuseProbe');
    expect(() => parseServiceFaults(putByUrl, 'loseResponse,keyReuseProbe')).toThrow(/unknown fault 'keyReuseProbe' \(service put-by-url: operation\.readsKey is false: idempotent by its URL, it makes no promise about a key sent again\)/);
    expect(() => validateDefinition({ ...putByUrl, operation: { ...putByUrl.operation, readsKey: 'no' } }, 'x.ts')).toThrow(/operation\.readsKey.*readsKey must be true or false/);
  });

  it('check --service: the PUT-by-URL service holds with every other fault, its faults line says why the probe is out; unsaid, it fails key-reuse and the hint names readsKey', async () => {
    const ok = await runMain(['check', '--service', 'src/service/fixtures/put-by-url.ts', '--runs', '200']);
    expect(ok.code, ok.out + ok.err).toBe(0);
    expect(ok.out).toMatch(/^faults: loseResponse, slow, concurrency, kill, pause, clockOffset, instances, loseAllAnswers, tenants, longSpans, threeWorkers \(no keyReuseProbe: operation\.readsKey is false: idempotent by its URL, it makes no promise about a key sent again\);/m);
    const racy = await runMain(['check', '--service', 'src/service/fixtures/put-by-url-racy.ts', '--runs', '300', '--found', tmp('rs-racy-'), '--json']);
    expect(racy.code).toBe(1);
    expect((JSON.parse(racy.out) as { violations: string[] }).violations).toEqual(['exactly-one']);
    const unsaid = await runMain(['check', '--service', 'src/service/fixtures/put-by-url-unsaid.ts', '--runs', '200', '--found', tmp('rs-unsaid-')]);
    expect(unsaid.code).toBe(1);
    expect(unsaid.out).toMatch(/key-reuse \(op1\): key '[^']+' sent again with a different body was accepted/);
    expect(unsaid.out).toContain('say so in its definition, operation: { readsKey: false, … }, and the probe is left out');
  }, 180_000);
});
