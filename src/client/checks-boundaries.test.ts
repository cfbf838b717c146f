import { describe, expect, it } from 'vitest';
import { clientCheckViolations, type ClientRun } from './run.js';
import { isAttemptOf } from './checks.js';
import type { SentRequest } from './sim-fetch.js';

/**
 * The client checks at the boundaries the mutation run (`npm run mutate --
 * recovery`, docs/mutation.md) found untested: which sends share a key
 * across operations and tenants, what "the same request" is for a key
 * (canonical JSON, other bodies as sent, another path is another request),
 * which Retry-After values are dates, what `backoff` calls one request and
 * how it names what it retried after, and the sentences of a call stopped
 * while waiting.
 */

type Worker = ClientRun['workers'][number];

const send = (atMs: number, more: Partial<SentRequest> = {}): SentRequest => ({ atMs, method: 'POST', path: '/orders', key: 'k1', body: '{}', ...more });
const worker = (sent: SentRequest[], more: Partial<Worker> = {}): Worker => ({ name: 'op1.w0', operation: 'op1', startMs: 0, endMs: 100, sent, outcome: 'resolved', ...more });
const judge = (workers: Worker[], deadlineMs = 10_000, epochMs?: number) => clientCheckViolations(workers, deadlineMs, epochMs);
const only = (invariant: string, workers: Worker[], epochMs?: number) => judge(workers, 10_000, epochMs).filter((v) => v.invariant === invariant);

describe('key-reuse across operations: in the order the keys were sent, per tenant', () => {
  it('names the later sender, whatever order the calls are listed in', () => {
    const v = only('key-reuse', [worker([send(10)], { name: 'op2.w0', operation: 'op2' }), worker([send(5)])]);
    expect(v).toEqual([{ invariant: 'key-reuse', op: 'op2', detail: 'op2.w0 sent Idempotency-Key k1 at t=10 ms, the key op1.w0 sent for another operation (op1) at t=5 ms: a service keyed on it cannot tell the two apart' }]);
  });

  it('no tenant is the default tenant; another tenant may send the same raw key', () => {
    expect(only('key-reuse', [worker([send(5)]), worker([send(10)], { name: 'op2.w0', operation: 'op2', tenant: 'default' })]).map((v) => v.op)).toEqual(['op2']);
    expect(only('key-reuse', [worker([send(5)]), worker([send(10)], { name: 'op2.w0', operation: 'op2', tenant: 'globex' })])).toEqual([]);
  });
});

describe('key-reuse within an operation: one key names one request', () => {
  it('the same request again with another body is named; JSON in another key order is the same body', () => {
    expect(only('key-reuse', [worker([send(0, { body: '{"a":1,"b":2}' }), send(5, { body: '{ "b": 2, "a": 1 }' })])])).toEqual([]);
    expect(only('key-reuse', [worker([send(0, { body: '{"a":1}' }), send(5, { body: '{"a":2}' })])])).toEqual([
      { invariant: 'key-reuse', op: 'op1', detail: 'op1.w0 sent Idempotency-Key k1 at t=5 ms with another body than it carried at t=0 ms: to the service the key names a different request (refused 422 where bodies are fingerprinted, answered with the first one\'s result where not)' },
    ]);
  });

  it('a body that is not JSON is compared as sent', () => {
    expect(only('key-reuse', [worker([send(0, { body: 'qty=1' }), send(5, { body: 'qty=1' })])])).toEqual([]);
    expect(only('key-reuse', [worker([send(0, { body: 'qty=1' }), send(5, { body: 'qty=2' })])]).map((v) => v.op)).toEqual(['op1']);
  });

  it('another request with the key (a GET asking whether the operation happened) is not a reuse', () => {
    expect(only('key-reuse', [worker([send(0, { body: '{"a":1}' }), send(5, { method: 'GET', path: '/orders/1', body: '' })])])).toEqual([]);
  });
});

describe('retry-after: only an HTTP-date in GMT, to the end of the value, is a date', () => {
  const EPOCH = Date.UTC(2026, 0, 1);
  const asked = (retryAfter: string) => [worker([send(0, { outcome: 503, answeredAtMs: 1, retryAfter }), send(2)])];

  it('a date 3 s on is judged; the same without GMT, or with an offset after it, is not a date and is not judged', () => {
    expect(only('retry-after', asked('Thu, 01 Jan 2026 00:00:03 GMT'), EPOCH).map((v) => v.detail)).toEqual([
      'op1.w0 got 503 with Retry-After: Thu, 01 Jan 2026 00:00:03 GMT at t=1 ms and sent again at t=2 ms, 1 ms later (asked: not before t=3000 ms, the date it names)',
    ]);
    expect(only('retry-after', asked('Thu, 01 Jan 2026 00:00:03'), EPOCH)).toEqual([]);
    // 01:00:03 UTC by the offset: a date in the future for a lenient parser, not an HTTP-date.
    expect(only('retry-after', asked('Thu, 01 Jan 2026 02:00:03 GMT+0100'), EPOCH)).toEqual([]);
  });
});

describe('backoff: what one request is, and how the outcomes are named', () => {
  const burst = (outcomes: Array<SentRequest['outcome']>, paths: string[] = []) =>
    [worker(outcomes.map((outcome, i) => send(i, { outcome, answeredAtMs: i + 1, path: paths[i] ?? '/orders' })).concat([send(outcomes.length, { path: paths[outcomes.length] ?? '/orders' })]))];

  it('names HTTP statuses as answers, anything else as outcomes', () => {
    expect(only('backoff', burst([503, 503, 503])).map((v) => v.detail)).toEqual(['op1.w0 retried 3 times after 503 answers without waiting: attempts at t=1, 2, 3 ms']);
    expect(only('backoff', burst(['connection_refused', 'connection_refused', 'connection_refused'])).map((v) => v.detail)).toEqual(['op1.w0 retried 3 times after connection_refused outcomes without waiting: attempts at t=1, 2, 3 ms']);
    expect(only('backoff', burst([503, 'timeout', 503])).map((v) => v.detail)).toEqual(['op1.w0 retried 3 times after 503/timeout outcomes without waiting: attempts at t=1, 2, 3 ms']);
    expect(only('backoff', burst([503, 500, 503])).map((v) => v.detail)).toEqual(['op1.w0 retried 3 times after 503/500 answers without waiting: attempts at t=1, 2, 3 ms']);
  });

  it('a retry follows the outcome that reached the call last, not the request listed last (a hedge answered earlier)', () => {
    const sent = [
      send(0, { outcome: 503, answeredAtMs: 10 }),
      send(2, { outcome: 503, answeredAtMs: 5 }), // a hedge, sent before the first outcome: no retry
      send(10, { outcome: 503, answeredAtMs: 11 }), // at once after the first request's 503 (t=10), 5 ms after the hedge's
      send(11, { outcome: 503, answeredAtMs: 12 }),
      send(12),
    ];
    expect(only('backoff', [worker(sent)]).map((v) => v.detail)).toEqual(['op1.w0 retried 3 times after 503 answers without waiting: attempts at t=10, 11, 12 ms']);
  });

  it('the query string aside, another path is another request: a crawl through other resources is no retry', () => {
    expect(only('backoff', burst([503, 503, 503], ['/orders', '/orders?try=2', '/orders?try=3', '/orders?try=4']))).toHaveLength(1);
    expect(only('backoff', burst([503, 503, 503], ['/a', '/b', '/c', '/d']))).toEqual([]);
  });
});

describe('a call stopped while it waited', () => {
  it('progress says it was still waiting; deadline counts its one request in the singular', () => {
    expect(only('progress', [worker([], { outcome: 'stopped', endMs: 7 })]).map((v) => v.detail)).toEqual(['op1.w0 was still waiting at t=7 ms without sending a request']);
    expect(judge([worker([send(0)], { outcome: 'stopped', endMs: 20_001 })], 20_000).map((v) => v.detail)).toEqual([
      'op1.w0 had not settled at t=20001 ms, past its deadline of 20000 ms, after 1 request: still retrying or waiting (stopped there)',
    ]);
  });
});

describe("isAttemptOf: the operation's own requests, in the simulation and on the wall clock alike", () => {
  it('is its method, in any case, and its path with any query string; another method or another path is not', () => {
    const is = isAttemptOf({ method: 'post', path: '/orders' });
    const q = (method: string, path: string): SentRequest => ({ atMs: 0, method, path, key: 'k', body: '{}' });
    expect(is(q('POST', '/orders'))).toBe(true);
    expect(is(q('POST', '/orders?source=web'))).toBe(true);
    expect(is(q('GET', '/orders'))).toBe(false);
    expect(is(q('POST', '/orders/1'))).toBe(false);
    expect(is(q('GET', '/orders/1?x=1'))).toBe(false);
  });
});
