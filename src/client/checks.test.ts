import { describe, expect, it } from 'vitest';
import { clientCheckViolations, NON_RETRYABLE_STATUSES, runClientScenario, type ClientRun, type RetryClient } from './run.js';
import type { SentRequest } from './sim-fetch.js';
import type { ServiceDefinition } from '../service/definition.js';
import { parseScenario } from '../scenario/load.js';

/**
 * The checks that judge a user's retry client from what each call sent and
 * when (SPEC §5's client checks) — `progress` (at least one request),
 * `deadline`, `retry-after`, `non-retryable` — on hand-built calls, at the
 * exact boundaries, with the sentence each prints. The same function judges
 * a simulated run and a wall-clock one (the flakiness lab's).
 */

type Worker = ClientRun['workers'][number];

const post = (atMs: number, more: Partial<SentRequest> = {}): SentRequest => ({ atMs, method: 'POST', path: '/orders', key: 'k1', body: '{}', ...more });
const worker = (sent: SentRequest[], more: Partial<Worker> = {}): Worker => ({ name: 'op1.w0', operation: 'op1', startMs: 0, endMs: 100, sent, outcome: 'resolved', ...more });
const judge = (workers: Worker[], deadlineMs = 10_000) => clientCheckViolations(workers, deadlineMs);

describe('progress: every call sends at least one request', () => {
  it('a call that sent nothing is named, with how it settled and when', () => {
    expect(judge([worker([], { endMs: 12 })])).toEqual([{ invariant: 'progress', op: 'op1', detail: 'op1.w0 resolved at t=12 ms without sending a request' }]);
    expect(judge([worker([], { outcome: 'rejected', error: 'TypeError: boom' })])[0]!.detail).toBe('op1.w0 rejected (TypeError: boom) at t=100 ms without sending a request');
    expect(judge([worker([], { outcome: 'rejected' })])[0]!.detail).toBe('op1.w0 rejected (no error) at t=100 ms without sending a request');
  });

  it('one request is enough; each call is judged on its own', () => {
    expect(judge([worker([post(0, { outcome: 201, answeredAtMs: 2 })])])).toEqual([]);
    const v = judge([worker([post(0)]), worker([], { name: 'op2.w0', operation: 'op2' })]);
    expect(v.map((x) => [x.invariant, x.op])).toEqual([['progress', 'op2']]);
  });
});

describe('deadline: a call settles, and sends nothing, later than deadlineMs after it started', () => {
  it('settling exactly at the deadline holds; 1 ms later does not, and the message says by how much', () => {
    expect(judge([worker([post(1000)], { startMs: 1000, endMs: 3000 })], 2000)).toEqual([]);
    expect(judge([worker([post(1000)], { startMs: 1000, endMs: 3001 })], 2000)).toEqual([
      { invariant: 'deadline', op: 'op1', detail: 'op1.w0 settled at t=3001 ms, 2001 ms after it started; its deadline is 2000 ms' },
    ]);
  });

  it('a request sent past the deadline is named even when the call settled in time (a request left behind)', () => {
    expect(judge([worker([post(1000), post(3000)], { startMs: 1000, endMs: 2500 })], 2000)).toEqual([]);
    expect(judge([worker([post(1000), post(3000.5)], { startMs: 1000, endMs: 2500 })], 2000)).toEqual([
      { invariant: 'deadline', op: 'op1', detail: 'op1.w0 sent a request at t=3000.5 ms, past its deadline of 2000 ms' },
    ]);
  });

  it('one sentence per call: a late settle is named, not also the late request', () => {
    expect(judge([worker([post(0), post(5000)], { endMs: 6000 })], 2000).map((v) => v.detail)).toEqual(['op1.w0 settled at t=6000 ms, 6000 ms after it started; its deadline is 2000 ms']);
  });
});

describe('retry-after: after Retry-After: N the call sends nothing for N s', () => {
  const throttled = (answeredAtMs: number, retryAfter: string | undefined, more: Partial<SentRequest> = {}) => post(answeredAtMs - 2, { outcome: 429, answeredAtMs, ...(retryAfter === undefined ? {} : { retryAfter }), ...more });

  it('waiting N s less 1 ms (the client clock\'s whole milliseconds) holds; sending earlier is named with the times', () => {
    expect(judge([worker([throttled(100, '2'), post(2099)])])).toEqual([]);
    expect(judge([worker([throttled(100, '2'), post(2098.5)])])).toEqual([
      { invariant: 'retry-after', op: 'op1', detail: 'op1.w0 got 429 with Retry-After: 2 at t=100 ms and sent again at t=2098.5 ms, 1998.5 ms later (asked: at least 2000 ms)' },
    ]);
  });

  it('the next request is the first one sent once the answer arrived — even at that same instant', () => {
    expect(judge([worker([throttled(100, '1'), post(100)])]).map((v) => v.invariant)).toEqual(['retry-after']);
    // Requests sent before the answer came back (a hedge) are not "after" it.
    expect(judge([worker([post(50), throttled(100, '1'), post(1100)])])).toEqual([]);
    // The throttled request itself, sent at the instant its answer came (no latency), is not its own retry.
    expect(judge([worker([post(100, { outcome: 429, answeredAtMs: 100, retryAfter: '1' }), post(1100)])])).toEqual([]);
  });

  it('N of several digits; a throttled request with nothing after it is fine', async () => {
    expect(judge([worker([throttled(100, '10'), post(9000)])]).map((v) => v.invariant)).toEqual(['retry-after']);
    expect(judge([worker([throttled(100, '10')])])).toEqual([]);
  });

  it('whitespace around N is allowed; a date, a fraction, an empty value or no answer time is not judged', () => {
    expect(judge([worker([throttled(100, ' 3 '), post(200)])]).map((v) => v.detail)).toEqual([
      'op1.w0 got 429 with Retry-After:  3  at t=100 ms and sent again at t=200 ms, 100 ms later (asked: at least 3000 ms)',
    ]);
    for (const ra of ['Wed, 21 Oct 2015 07:28:00 GMT', '1.5', '', '2s', 'x2']) expect(judge([worker([throttled(100, ra), post(101)])]), ra).toEqual([]);
    expect(judge([worker([throttled(100, undefined), post(101)])])).toEqual([]);
    expect(judge([worker([post(0, { outcome: 'aborted', retryAfter: '5' }), post(101)])])).toEqual([]);
  });

  it('an HTTP-date is judged on the client\'s clock (its epoch given): nothing before the instant it names', () => {
    const epoch = Date.UTC(2026, 0, 1); // the client's clock reads it at t=0
    const at3s = 'Thu, 01 Jan 2026 00:00:03 GMT';
    const judgeOn = (sent: SentRequest[]) => clientCheckViolations([worker(sent)], 10_000, epoch);
    expect(judgeOn([throttled(100, at3s), post(2999)])).toEqual([]);
    expect(judgeOn([throttled(100, at3s), post(400)])).toEqual([
      { invariant: 'retry-after', op: 'op1', detail: `op1.w0 got 429 with Retry-After: ${at3s} at t=100 ms and sent again at t=400 ms, 300 ms later (asked: not before t=3000 ms, the date it names)` },
    ]);
    expect(judgeOn([throttled(100, at3s), post(2998.5)]).map((v) => v.invariant)).toEqual(['retry-after']);
    // RFC 850's form names the same instant; a date already past when the answer came asks for no wait.
    expect(judgeOn([throttled(100, 'Thursday, 01-Jan-26 00:00:03 GMT'), post(400)]).map((v) => v.invariant)).toEqual(['retry-after']);
    expect(judgeOn([throttled(5000, at3s), post(5001)])).toEqual([]);
    // What only V8's lenient parser takes for a date is not one.
    for (const ra of ['1.5', 'Mar 5', '2s']) expect(judgeOn([throttled(100, ra), post(101)]), ra).toEqual([]);
  });

  it('one sentence per call, every call judged', () => {
    const w = worker([throttled(100, '1'), post(200), throttled(300, '1'), post(400)]);
    const v = judge([w, { ...w, name: 'op1.w1' }]);
    expect(v.map((x) => x.detail.slice(0, 6))).toEqual(['op1.w0', 'op1.w1']);
  });
});

describe('non-retryable: after 400, 401, 403, 404 or 422 the call never sends the operation again', () => {
  it('the statuses are exactly SPEC §5\'s', () => {
    expect([...NON_RETRYABLE_STATUSES].sort()).toEqual([400, 401, 403, 404, 422]);
  });

  it('each of them, sent again (same method and path), is named with both times', () => {
    for (const status of [400, 401, 403, 404, 422]) {
      expect(judge([worker([post(0, { outcome: status, answeredAtMs: 2 }), post(50)])]), String(status)).toEqual([
        { invariant: 'non-retryable', op: 'op1', detail: `op1.w0 got HTTP ${status} at t=2 ms (retrying cannot help) and sent POST /orders again at t=50 ms` },
      ]);
    }
  });

  it('retryable answers and transport failures may be retried', () => {
    for (const outcome of [408, 409, 429, 500, 503, 'timeout', 'aborted'] as const) {
      expect(judge([worker([post(0, { outcome, answeredAtMs: 2 }), post(50)])]), String(outcome)).toEqual([]);
    }
  });

  it('another request afterwards (a GET asking whether it took effect, another path) is not a retry; one sent before the answer is not either', () => {
    const refused = post(0, { outcome: 422, answeredAtMs: 2 });
    expect(judge([worker([refused, post(50, { method: 'GET' }), post(60, { path: '/other' })])])).toEqual([]);
    expect(judge([worker([post(1), refused])])).toEqual([]);
    // Sent at the very instant the refusal arrived: already after it.
    expect(judge([worker([refused, post(2)])]).map((v) => v.invariant)).toEqual(['non-retryable']);
    // A refusal with no answer time (none arrived) is not judged; the request itself is not its own retry.
    expect(judge([worker([post(0, { outcome: 422 }), post(50)])])).toEqual([]);
    expect(judge([worker([post(2, { outcome: 422, answeredAtMs: 2 })])])).toEqual([]);
  });

  it('one sentence per call, every call judged', () => {
    const w = worker([post(0, { outcome: 400, answeredAtMs: 2 }), post(50, { outcome: 400, answeredAtMs: 52 }), post(90)]);
    expect(judge([w, { ...w, name: 'op1.w1' }]).map((v) => v.detail.slice(0, 6))).toEqual(['op1.w0', 'op1.w1']);
  });
});

describe('clientCheckViolations', () => {
  it('lists progress, deadline, retry-after, non-retryable, in that order', () => {
    const silent = worker([], { name: 'op2.w0', operation: 'op2' });
    const busy = worker([post(0, { outcome: 429, answeredAtMs: 2, retryAfter: '1' }), post(10, { outcome: 422, answeredAtMs: 12 }), post(20)], { endMs: 5000 });
    expect(judge([busy, silent], 1000).map((v) => v.invariant)).toEqual(['progress', 'deadline', 'retry-after', 'non-retryable']);
  });
});

/**
 * How a client run becomes what the service's invariants judge: per
 * operation, every worker's requests as attempts (a call's key scope is the
 * worker; a 2xx answer's id and body are kept; an attempt ends when its
 * answer arrived) and each worker's result (a success only with an id).
 * A service written here answers each POST as its `x-act` header says.
 */
describe('runClientScenario: what the service\'s invariants are given', () => {
  const orders: ServiceDefinition = {
    name: 'acts',
    tables: ['orders'],
    setup: (db) => db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, ref TEXT NOT NULL)'),
    steps: ['work'],
    operation: { path: '/orders', body: (op) => JSON.stringify({ ref: op.runId }) },
    effects: { noun: 'order', of: (db, op) => db.prepare('SELECT id FROM orders WHERE ref = ?').pluck().all(op.runId) as number[] },
    async handle(req, sim) {
      const act = req.headers['x-act'] ?? 'store';
      await sim.step('work');
      if (act === 'slow') await sim.sleep(500);
      const { ref } = JSON.parse(req.body) as { ref: string };
      // phantom: acknowledges an id it never stored; noid: acknowledges with no id at all.
      if (act === 'phantom') return { status: 201, body: '{"id":999}' };
      if (act === 'noid') return { status: 201, body: '{}' };
      if (act === '300') return { status: 300, body: '{"id":999}' };
      // shed: come back in 3 s, said as an HTTP-date (a user's service may; the throttle fault says seconds).
      if (act === 'shed') return { status: 503, headers: { 'retry-after': new Date(sim.now() + 3000).toUTCString() }, body: '{}' }; // real-time: allowed (the service's Date, on the kernel clock)
      let id = sim.db.prepare('SELECT id FROM orders WHERE ref = ?').pluck().get(ref) as number | undefined;
      id ??= Number(sim.db.prepare('INSERT INTO orders (ref) VALUES (?)').run(ref).lastInsertRowid);
      // differ/slow: a 200 whose body changes with every request (a replay that is not the first answer).
      if (act === 'differ' || act === 'slow') return { status: 200, body: JSON.stringify({ id, at: sim.now() }) };
      return { status: 201, body: JSON.stringify({ id }) };
    },
  };
  /** A client that sends one request per act, in order, under one key per call (or the key given). */
  const acts = (list: string[], key?: string): RetryClient => ({
    name: 'acts', deadlineMs: 60_000,
    async run(fetch, op) {
      const k = key ?? crypto.randomUUID();
      for (const act of list) await (await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': k, 'x-act': act }, body: op.body })).text();
    },
  });
  const s = (workers = 1, staggerMs = 0) => parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'acts', seed: 1, service: { module: 'acts' }, client: { keySource: 'tool_call' },
    operations: [{ id: 'op1', runId: 'order-1', module: 'm', title: 't', workers, staggerMs }], expect: {},
  }));
  const run = (client: RetryClient, workers?: number, staggerMs?: number) => runClientScenario(s(workers, staggerMs), client, { service: orders });

  it('a 2xx with an id is a success the service must hold: an id it never stored is named twice (exactly-one, id-exists)', async () => {
    const r = await run(acts(['phantom']));
    expect(r.violations.map((v) => v.invariant)).toEqual(['exactly-one', 'id-exists']);
    expect(r.violations[0]!.detail).toBe('the client was told it succeeded, but no order exists');
    expect(r.violations[1]!.detail).toBe('attempt op1.w0#1 was given order id 999, which is not one of this operation\'s orders');
  });

  it('a 2xx without an id acknowledges nothing: no success, nothing to hold', async () => {
    const r = await run(acts(['noid']));
    expect(r.reports.op1).toBe(0);
    expect(r.violations).toEqual([]);
  });

  it('only a 2xx acknowledges: a 300 carrying an id is no success (its id is not judged); a call that resolves on it told its caller the order was made', async () => {
    const r = await run(acts(['300']));
    expect(r.workers[0]!.sent.map((x) => x.outcome)).toEqual([300]);
    expect(r.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
    expect(r.violations[0]!.detail).toMatch(/^op1\.w0 resolved at t=\d+ ms, telling its caller the order was made, with no 2xx answer \(its last request: 300\), but no order exists/);
  });

  it('a Retry-After given as an HTTP-date is judged: a client that reads only the number (NaN for a date) and retries at once fails retry-after; one that waits for the date holds', async () => {
    const shedThenStore = (readsDates: boolean): RetryClient => ({
      name: readsDates ? 'reads-dates' : 'reads-numbers', deadlineMs: 60_000,
      async run(fetch, op) {
        const k = crypto.randomUUID(); // real-time: allowed (client code; seeded by the bridge)
        const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': k, 'x-act': 'shed' }, body: op.body });
        const h = res.headers.get('retry-after') ?? '';
        const waitMs = Number(h) > 0 ? Number(h) * 1000 : readsDates && !Number.isNaN(Date.parse(h)) ? Date.parse(h) - Date.now() : 100; // real-time: allowed (client code; the bridge's clock)
        await new Promise((r) => setTimeout(r, waitMs)); // real-time: allowed (client code; the bridge's clock)
        await (await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': k }, body: op.body })).text();
      },
    });
    const bad = await run(shedThenStore(false));
    expect(bad.violations.map((v) => v.invariant)).toEqual(['retry-after']);
    expect(bad.violations[0]!.detail).toMatch(/^op1\.w0 got 503 with Retry-After: Thu, 01 Jan 1970 00:00:03 GMT at t=\d+ ms and sent again at t=\d+ ms, 100 ms later \(asked: not before t=3000 ms, the date it names\)$/);
    expect((await run(shedThenStore(true))).violations).toEqual([]);
  });

  it('the trace is kept only when asked for', async () => {
    expect((await runClientScenario(s(), acts(['store']), { service: orders, keepTrace: true })).trace.length).toBeGreaterThan(0);
    expect((await run(acts(['store']))).trace).toEqual([]);
  });

  it('the success counted is one with an id, whatever came after it', async () => {
    const r = await run(acts(['phantom', 'noid']));
    // (and the second answer is not the first again: replay-equals-first)
    expect(r.violations.map((v) => v.invariant)).toEqual(['exactly-one', 'id-exists', 'replay-equals-first']);
  });

  it('a call is its own key scope: two workers with a key each hold stable-key; one call with two keys does not', async () => {
    expect((await run(acts(['store']), 2)).violations).toEqual([]);
    let n = 0;
    const twoKeys: RetryClient = {
      name: 'two-keys', deadlineMs: 60_000,
      async run(fetch, op) {
        for (const k of [`a${n}`, `b${n++}`]) await (await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': k }, body: op.body })).text();
      },
    };
    const r = await run(twoKeys);
    expect(r.violations.map((v) => `${v.invariant}: ${v.detail}`)).toEqual(['stable-key: call op1.w0 sent 2 different keys across its attempts']);
  });

  it('under one key every 2xx answer must repeat the first: attempts are numbered per call, with status and body', async () => {
    const r = await run(acts(['differ', 'differ'], 'k1'));
    expect(r.violations).toHaveLength(1);
    expect(r.violations[0]!.invariant).toBe('replay-equals-first');
    expect(r.violations[0]!.detail).toMatch(/^key 'k1': attempt op1\.w0#2 was answered HTTP 200 \{"id":1,"at":\d+\.?\d*\} at t=\d+ ms, but the first success \(attempt op1\.w0#1, t=\d+ ms\) was HTTP 200 \{"id":1,"at":\d+\.?\d*\}$/);
  });

  it('"first" is the first answer received, not the first request sent: a slow first request\'s answer comes second', async () => {
    // Worker 0 sends at t=0 and is answered after 500 ms; worker 1 sends at t=100 and is answered at once, first.
    let w = 0;
    const client: RetryClient = {
      name: 'two-workers', deadlineMs: 60_000,
      async run(fetch, op) {
        const act = w++ === 0 ? 'slow' : 'differ';
        await (await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': 'shared', 'x-act': act }, body: op.body })).text();
      },
    };
    const r = await run(client, 2, 100);
    expect(r.violations).toHaveLength(1);
    expect(r.violations[0]!.detail).toMatch(/^key 'shared': attempt op1\.w0#1 was answered HTTP 200 .* at t=50\d ms, but the first success \(attempt op1\.w1#1, t=10\d ms\)/);
  });
});

describe('key-reuse: two operations of one tenant never send the same Idempotency-Key', () => {
  it('a key another operation sent first is named, once per operation, with both calls and times', () => {
    const v = judge([worker([post(0, { key: 'k-0' })]), worker([post(5, { key: 'k-0' }), post(9, { key: 'k-0' })], { name: 'op2.w0', operation: 'op2' })]);
    expect(v).toEqual([{ invariant: 'key-reuse', op: 'op2', detail: 'op2.w0 sent Idempotency-Key k-0 at t=5 ms, the key op1.w0 sent for another operation (op1) at t=0 ms: a service keyed on it cannot tell the two apart' }]);
  });

  it('the workers of one operation share its key (its concurrent duplicates), tenants scope keys, no key is no key', () => {
    expect(judge([worker([post(0)]), worker([post(1)], { name: 'op1.w1' })])).toEqual([]);
    expect(judge([worker([post(0)], { tenant: 'default' }), worker([post(1)], { name: 'op2.w0', operation: 'op2', tenant: 'globex' })])).toEqual([]);
    expect(judge([worker([post(0, { key: undefined })]), worker([post(1, { key: undefined })], { name: 'op2.w0', operation: 'op2' })])).toEqual([]);
  });

  it('a client deriving its key from the second it starts in: the campaign against the built-in service finds it (two operations at once)', async () => {
    const { runClientCampaign } = await import('./campaign.js');
    const client: RetryClient = {
      name: 'second-key',
      deadlineMs: 30_000,
      async run(fetch, op) {
        const key = `k-${Math.floor(Date.now() / 1000)}`;
        const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        return res.json();
      },
    };
    const r = await runClientCampaign({ client, runs: 200, seed: 1, faults: [] });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations.map((x) => x.invariant)).toContain('key-reuse');
  }, 60_000);

  it('a client keying on a hash of the body without the operation\'s id: the default campaign finds two operations with the same content (it held: every generated title differed)', async () => {
    const { runClientCampaign, CLIENT_FAULTS } = await import('./campaign.js');
    const { createHash } = await import('node:crypto');
    const client: RetryClient = {
      name: 'content-key',
      deadlineMs: 30_000,
      async run(fetch, op) {
        // "The same content is the same request": every field but the id, hashed.
        const { run_id: _id, ...content } = JSON.parse(op.body) as Record<string, unknown>;
        const key = createHash('sha256').update(JSON.stringify(content)).digest('hex').slice(0, 32);
        const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(2000) });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        return res.json();
      },
    };
    const r = await runClientCampaign({ client, runs: 100, seed: 1 });
    expect(r.verdict).toBe('fails');
    const ce = r.counterexample!;
    expect(ce.violations.map((x) => x.invariant)).toEqual(['key-reuse']);
    // Two operations, nothing else: the same content is the whole story.
    expect(ce.size).toMatchObject({ operations: 2, faults: 0 });
    expect(new Set(ce.scenario.operations.map((o) => o.title)).size).toBe(1);
    // Without the dimension the same client holds: a key made from the content alone was never shown to collide.
    const without = await runClientCampaign({ client, runs: 100, seed: 1, faults: CLIENT_FAULTS.filter((f) => f !== 'sameContent') });
    expect(without.verdict).toBe('holds');
  }, 60_000);
});
