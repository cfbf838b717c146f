import { describe, expect, it } from 'vitest';
import { clientCheckViolations, NON_RETRYABLE_STATUSES, type ClientRun } from './run.js';
import type { SentRequest } from './sim-fetch.js';

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

  it('whitespace around N is allowed; a date, a fraction, an empty value or no answer time is not judged', () => {
    expect(judge([worker([throttled(100, ' 3 '), post(200)])]).map((v) => v.detail)).toEqual([
      'op1.w0 got 429 with Retry-After:  3  at t=100 ms and sent again at t=200 ms, 100 ms later (asked: at least 3000 ms)',
    ]);
    for (const ra of ['Wed, 21 Oct 2015 07:28:00 GMT', '1.5', '', '2s', 'x2']) expect(judge([worker([throttled(100, ra), post(101)])]), ra).toEqual([]);
    expect(judge([worker([throttled(100, undefined), post(101)])])).toEqual([]);
    expect(judge([worker([post(0, { outcome: 'aborted', retryAfter: '5' }), post(101)])])).toEqual([]);
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
