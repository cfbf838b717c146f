import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { clientCases, runClientCase } from '../vitest.js';
import { runClientScenario, type RetryClient } from './run.js';
import { parseScenario } from '../scenario/load.js';
import { scenarioSize, type GeneratedCase } from '../scenario/arbitraries.js';
import { buggyClient as buggy, fixedClient as fixed } from '../../examples/fetch-retry-client/client.js';


/** One payment, one lost answer after the commit: the retry must carry the same key. */
function lostAnswer(extra: object = {}) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'one lost answer', seed: 1,
    service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
    faults: { loseResponseAfterCommit: 1 },
    operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
    expect: {},
    ...extra,
  }));
}

describe('a user\'s fetch retry client on virtual time', () => {
  it('a new key per attempt is refuted: the retry after a lost answer pays twice', async () => {
    const r = await runClientScenario(lostAnswer(), buggy);
    expect(r.violations.map((v) => v.invariant).sort()).toEqual(['exactly-one', 'stable-key']);
    const keys = new Set(r.workers[0]!.sent.map((s) => s.key));
    expect(keys.size).toBe(2);
    expect(r.reports.op1).toBe(2);
  });

  it('one key per operation holds on the same scenario', async () => {
    const r = await runClientScenario(lostAnswer(), fixed);
    expect(r.violations).toEqual([]);
    expect(r.reports.op1).toBe(1);
    expect(r.workers[0]!.sent).toHaveLength(2);
    expect(r.workers[0]!.outcome).toBe('resolved');
  });

  it('timeouts are AbortSignals on virtual time: a request paused for 30 s is abandoned at 2 s and retried', async () => {
    const s = lostAnswer({ faults: { pause: { atStep: 'process', ms: 30_000, count: 1 } } });
    const r = await runClientScenario(s, fixed);
    const sent = r.workers[0]!.sent;
    expect(sent[0]!.outcome).toBe('aborted');
    expect(sent[1]!.atMs).toBeGreaterThanOrEqual(2000);
    expect(sent[1]!.outcome).toBe(409); // the paused request still holds the key
    expect(r.violations).toEqual([]);
  });

  it('a client past its deadline is refuted on deadline', async () => {
    const hurried: RetryClient = { ...fixed, name: 'hurried', deadlineMs: 1000 };
    const r = await runClientScenario(lostAnswer({ faults: { pause: { atStep: 'process', ms: 30_000, count: 1 } } }), hurried);
    expect(r.violations.map((v) => v.invariant)).toContain('deadline');
  });

  it('a client that never stops retrying fails on deadline, stopped 1 ms past it, and sends nothing after (it ran into the simulation limit: exit 2, no counterexample)', async () => {
    // Retries every 250 ms whatever the answer, success included: the bug of a loop without a cap or an exit.
    const forever: RetryClient = {
      name: 'forever', deadlineMs: 2000,
      async run(fetch, op) {
        const key = crypto.randomUUID();
        for (;;) {
          await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body }).catch(() => undefined);
          await new Promise((r) => setTimeout(r, 250));
        }
      },
    };
    // Two calls of one operation, the second starting 1 s later: each is let go at its own deadline, and the first one's fetch goes quiet while the second still runs.
    const s = lostAnswer({ operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1', workers: 2, staggerMs: 1000 }] });
    const r = await runClientScenario(s, forever);
    expect(r.workers.map((w) => [w.outcome, w.endMs])).toEqual([['stopped', 2001], ['stopped', 3001]]);
    for (const w of r.workers) expect(Math.max(...w.sent.map((q) => q.atMs))).toBeLessThanOrEqual(w.startMs + 2000);
    expect(r.violations.filter((v) => v.invariant === 'deadline').map((v) => v.detail)).toEqual([
      `op1.w0 had not settled at t=2001 ms, past its deadline of 2000 ms, after ${r.workers[0]!.sent.length} requests: still retrying or waiting (stopped there)`,
      `op1.w1 had not settled at t=3001 ms, past its deadline of 2000 ms, after ${r.workers[1]!.sent.length} requests: still retrying or waiting (stopped there)`,
    ]);
    // A call waiting on an answer that comes after its deadline (no timeout of its own) is let go at the deadline too.
    const patient: RetryClient = { name: 'patient', deadlineMs: 1000, async run(fetch, op) { await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': 'k' }, body: op.body }); } };
    const p = await runClientScenario(lostAnswer({ faults: { pause: { atStep: 'process', ms: 30_000, count: 1 } } }), patient);
    expect(p.workers[0]).toMatchObject({ outcome: 'stopped', endMs: 1001 });
    expect(p.violations.map((v) => v.invariant)).toContain('deadline');
  });

  it('a client that calls the global fetch for the service reaches the simulation; one that calls it for another host is a one-line client error; the real fetch is never reached and is back afterwards', async () => {
    const viaGlobal = (url: (op: Parameters<RetryClient['run']>[1]) => string): RetryClient => ({
      name: 'global-fetch', deadlineMs: 5000,
      async run(_fetch, op) {
        // Its production code's habit: the global fetch, with a timeout that would have aborted it on virtual time.
        const res = await globalThis.fetch(url(op), { method: op.method, headers: op.headers, body: op.body, signal: AbortSignal.timeout(2000) });
        return res.status;
      },
    });
    const real = globalThis.fetch;
    let reached = 0;
    // Stands for the real network: the run must not get here (it used to: a real DNS lookup of service.sim, then a 'progress' verdict at t=2000 ms).
    const network = (() => { reached++; return new Promise<Response>(() => {}); }) as typeof fetch;
    globalThis.fetch = network;
    try {
      const run = await runClientScenario(lostAnswer(), viaGlobal((op) => op.url));
      expect(run.workers[0]!.sent.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /reports']);
      await expect(runClientScenario(lostAnswer(), viaGlobal(() => 'https://payments.example.com/v1/charges'))).rejects.toThrow("client module 'global-fetch': it called the global fetch (POST https://payments.example.com/v1/charges), which would leave the simulation: only requests under op.url's origin (http://service.sim) reach the simulated service");
      expect(reached).toBe(0);
      expect(globalThis.fetch).toBe(network);
    } finally {
      globalThis.fetch = real;
    }
    expect((await runClientScenario(lostAnswer(), fixed)).violations).toEqual([]);
  });

  it('a Request object and a body of bytes go on the wire as fetch sends them: method, key, body (a Request went out as a bodiless GET, bytes as "123,34,…", and the client held on 400s)', async () => {
    const make = (name: string, call: (fetch: typeof globalThis.fetch, op: Parameters<RetryClient['run']>[1], key: string) => Promise<Response>): RetryClient => ({
      name, deadlineMs: 12_000,
      async run(fetch, op) {
        const key = crypto.randomUUID();
        for (let attempt = 1; attempt <= 4; attempt++) {
          try {
            const res = await call(fetch, op, key);
            if (res.ok) return await res.json();
            throw new Error(`HTTP ${res.status}: ${await res.text()}`);
          } catch (e) {
            if (!(e instanceof TypeError)) throw e;
          }
          await new Promise((r) => setTimeout(r, 100));
        }
        throw new Error('gave up');
      },
    });
    const clients = [
      make('request-object', (fetch, op, key) => fetch(new Request(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body }))),
      make('bytes-body', (fetch, op, key) => fetch(op.url, { method: op.method, headers: new Headers({ ...op.headers, 'Idempotency-Key': key }), body: new TextEncoder().encode(op.body) })),
      make('request-and-init', (fetch, op, key) => fetch(new Request(op.url, { method: 'GET' }), { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: Buffer.from(op.body) })),
    ];
    for (const c of clients) {
      const r = await runClientScenario(lostAnswer(), c);
      const sent = r.workers[0]!.sent;
      expect(sent.map((q) => [q.method, q.path, q.body]), c.name).toEqual(sent.map(() => ['POST', '/reports', JSON.stringify({ run_id: 'order-1', module: 'shop', title: 'Pay order 1', steps: '' })]));
      expect(new Set(sent.map((q) => q.key)).size, c.name).toBe(1);
      expect(sent[0]!.key, c.name).toMatch(/^[0-9a-f-]{36}$/);
      expect(sent.map((q) => q.outcome), c.name).toEqual(['connection_closed', 201]);
      expect(r.reports.op1, c.name).toBe(1);
      expect(r.violations, c.name).toEqual([]);
      // The body's read takes host turns, not virtual time: the same run twice is the same trace.
      expect((await runClientScenario(lostAnswer(), c)).result.traceHash, c.name).toBe(r.result.traceHash);
    }
  });

  it('runs are deterministic: the same case draws the same keys and sends the same requests', async () => {
    const a = await runClientScenario(lostAnswer(), buggy);
    const b = await runClientScenario(lostAnswer(), buggy);
    expect(b.workers).toEqual(a.workers);
    expect(b.result.traceHash).toBe(a.result.traceHash);
  });

  it('as a property: the buggy client fails with a shrunk counterexample of one operation and one fault; the fixed one holds', async () => {
    const prop = (client: RetryClient) => fc.asyncProperty(clientCases(), async (c) => (await runClientCase(client, c)).violations.length === 0);
    const bad = await fc.check(prop(buggy), { numRuns: 300, seed: 1 });
    expect(bad.failed).toBe(true);
    const [c] = bad.counterexample as [GeneratedCase];
    const size = scenarioSize(c.scenario, 0);
    expect(size.operations).toBe(1);
    expect(size.workers).toBe(1);
    expect(size.faults).toBe(1);
    const r = await runClientCase(buggy, c);
    expect(r.violations.map((v) => v.invariant)).toContain('stable-key');
    const good = await fc.check(prop(fixed), { numRuns: 300, seed: 1 });
    expect(good.failed, String(good.counterexample && JSON.stringify((await runClientCase(fixed, good.counterexample[0] as GeneratedCase)).violations))).toBe(false);
  }, 120_000);

  it('the throttle fault answers 429 with Retry-After before the handler, on virtual time; a client that honours it holds', async () => {
    const r = await runClientScenario(lostAnswer({ faults: {}, network: { throttle: { count: 1, retryAfterS: 2 } } }), fixed);
    const [first, second] = r.workers[0]!.sent;
    expect(first).toMatchObject({ outcome: 429, retryAfter: '2' });
    expect(second!.atMs - first!.answeredAtMs!).toBeGreaterThanOrEqual(2000);
    expect(second!.outcome).toBe(201);
    expect(r.reports.op1).toBe(1); // the 429 never reached the handler
    expect(r.violations).toEqual([]);
    expect(r.trace.length).toBe(0);
  });

  it('a client that ignores Retry-After is refuted on retry-after (and only that)', async () => {
    const r = await runClientScenario(lostAnswer({ faults: {}, network: { throttle: { count: 1, retryAfterS: 2 } } }), impatient);
    expect(r.violations.map((v) => v.invariant)).toEqual(['retry-after']);
    expect(r.violations[0]!.detail).toMatch(/op1\.w0 got 429 with Retry-After: 2 at t=\d+ ms and sent again at t=\d+ ms, \d+ ms later \(asked: at least 2000 ms\)/);
  });

  it('as a property over the client fault space (throttle included): the impatient client fails on retry-after, shrunk to one 429', async () => {
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(impatient, c)).violations.length === 0);
    const bad = await fc.check(prop, { numRuns: 300, seed: 1 });
    expect(bad.failed).toBe(true);
    const [c] = bad.counterexample as [GeneratedCase];
    expect(c.scenario.network.throttle?.count).toBe(1);
    expect(scenarioSize(c.scenario, 0).faults).toBe(1);
    expect((await runClientCase(impatient, c)).violations.map((v) => v.invariant)).toEqual(['retry-after']);
  }, 120_000);

  it('a client that waits exactly Retry-After holds, whatever fractions of a ms the kernel\'s times carry (the fake clock never runs ahead)', async () => {
    // Seeds whose cases once refuted the fixed client on retry-after by
    // 1–1.5 ms: the fake clock re-added the kernel's fraction every round.
    const prop = fc.asyncProperty(clientCases(), async (c) => (await runClientCase(fixed, c)).violations.length === 0);
    for (const seed of [3, 7]) {
      const r = await fc.check(prop, { numRuns: 300, seed });
      expect(r.failed, `seed ${seed}: ${r.counterexample ? JSON.stringify((await runClientCase(fixed, r.counterexample[0] as GeneratedCase)).violations) : ''}`).toBe(false);
    }
  }, 120_000);

  it('a client that settles without sending anything is refuted on progress (it would hold every other check vacuously)', async () => {
    const silent: RetryClient = { name: 'silent', deadlineMs: 5000, async run() { throw new TypeError('boom'); } };
    const r = await runClientScenario(lostAnswer(), silent);
    expect(r.violations.map((v) => v.invariant)).toEqual(['progress']);
    expect(r.violations[0]!.detail).toBe('op1.w0 rejected (TypeError: boom) at t=0 ms without sending a request');
    expect((await runClientScenario(lostAnswer(), fixed)).violations).toEqual([]);
  });

  it('a client that can never finish on virtual time is a one-line client error, and the real clock is back afterwards', async () => {
    const spins: RetryClient = { name: 'spins', deadlineMs: 5000, async run() { for (;;) await new Promise((r) => setTimeout(r, 0)); } };
    const waitsOnNothing: RetryClient = { name: 'waits-on-nothing', deadlineMs: 5000, run: () => new Promise(() => {}) };
    for (const [client, why] of [[spins, /client module 'spins': .*never/], [waitsOnNothing, /client module 'waits-on-nothing': the client is waiting, but on neither a timer nor a request/]] as const) {
      await expect(runClientScenario(lostAnswer(), client)).rejects.toThrow(why);
      // The fakes are gone: time moves again, and another run can start.
      const t = Date.now();
      expect(t).toBeGreaterThan(1_600_000_000_000);
      await new Promise((r) => setTimeout(r, 1));
      expect((await runClientScenario(lostAnswer(), fixed)).violations).toEqual([]);
    }
  });
});

/** The fixed client, except that it retries 10 ms after a 429 whatever Retry-After says. */
const impatient: RetryClient = {
  name: 'impatient',
  deadlineMs: 12_000,
  async run(fetch, op) {
    const key = crypto.randomUUID();
    for (let attempt = 1; attempt <= 4; attempt++) {
      try {
        const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(2000) });
        if (res.ok) return await res.json();
        if (res.status !== 429 && res.status < 500) throw new Error(`HTTP ${res.status}`);
      } catch (e) {
        if (!(e instanceof TypeError || (e instanceof DOMException && e.name === 'TimeoutError'))) throw e;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error('gave up');
  },
};
