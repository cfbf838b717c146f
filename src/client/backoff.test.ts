import { describe, expect, it } from 'vitest';
import { clientCheckViolations, runClientScenario, type ClientRun } from './run.js';
import type { SentRequest } from './sim-fetch.js';
import { runClientCampaign } from './campaign.js';
import { parseScenario } from '../scenario/load.js';
import { hammerClient, jitteredClient } from './fixtures/hammer-client.js';
import { fixedClient } from '../../examples/fetch-retry-client/client.js';

/**
 * `backoff` (SPEC §5: retryable answers and lost ones are retried only with
 * backoff): a call that retried 3 times or more after retryable outcomes,
 * every time at the very instant the outcome reached it, fails; one
 * immediate retry among backed-off ones, or a Full-Jitter draw of 0, does
 * not.
 */

type Worker = ClientRun['workers'][number];

const post = (atMs: number, more: Partial<SentRequest> = {}): SentRequest => ({ atMs, method: 'POST', path: '/orders', key: 'k1', body: '{}', ...more });
/** A request answered `status` 1 ms after it was sent. */
const failed = (atMs: number, outcome: SentRequest['outcome'] = 503, more: Partial<SentRequest> = {}) => post(atMs, { outcome, answeredAtMs: atMs + 1, ...more });
const worker = (sent: SentRequest[]): Worker => ({ name: 'op1.w0', operation: 'op1', startMs: 0, endMs: 100, sent, outcome: 'resolved' });
const judge = (sent: SentRequest[]) => clientCheckViolations([worker(sent)], 10_000, 0).filter((v) => v.invariant === 'backoff');

describe('backoff: judged per call from its send and answer times', () => {
  it('three retries each sent the instant a 503 came back fail, named with their times; two do not', () => {
    expect(judge([failed(0), failed(1), failed(2), post(3, { outcome: 201, answeredAtMs: 4 })])).toEqual([
      { invariant: 'backoff', op: 'op1', detail: 'op1.w0 retried 3 times after 503 answers without waiting: attempts at t=1, 2, 3 ms' },
    ]);
    expect(judge([failed(0), failed(1), post(2, { outcome: 201, answeredAtMs: 3 })])).toEqual([]);
  });

  it('any wait before any one retry holds: an immediate first retry, then backed-off ones; a Full-Jitter draw of 0 among others', () => {
    expect(judge([failed(0, 'connection_closed'), failed(1), failed(102), failed(403), post(804)])).toEqual([]);
    // Half a millisecond is a wait (the network's time is not whole milliseconds).
    expect(judge([failed(0), failed(1), failed(2), post(3.5)])).toEqual([]);
  });

  it('transport failures and the client\'s own timeout count, the latter from when it gave up; the outcomes are named', () => {
    expect(judge([failed(0, 'connection_refused'), failed(1, 'connection_refused'), failed(2, 'timeout'), post(3)]).map((v) => v.detail)).toEqual([
      'op1.w0 retried 3 times after connection_refused/timeout outcomes without waiting: attempts at t=1, 2, 3 ms',
    ]);
    const aborted = (atMs: number) => post(atMs, { outcome: 'aborted', abortedAtMs: atMs + 2000 });
    expect(judge([aborted(0), aborted(2000), aborted(4000), post(6000)]).map((v) => v.detail)).toEqual(['op1.w0 retried 3 times after aborted outcomes without waiting: attempts at t=2000, 4000, 6000 ms']);
  });

  it('a retry after an answer with Retry-After (0 included: the server named the wait) is not counted; the rest still are', () => {
    const zero = (atMs: number) => failed(atMs, 429, { retryAfter: '0' });
    expect(judge([failed(0), zero(1), failed(2), post(3)])).toEqual([]);
    expect(judge([failed(0), zero(1), failed(2), failed(3), post(4)]).map((v) => v.detail)).toEqual(['op1.w0 retried 3 times after 503 answers without waiting: attempts at t=1, 3, 4 ms']);
  });

  it('only retries after retryable outcomes of the same request: not after a 2xx or a 4xx, not a GET asking, not a hedge sent before the answer', () => {
    expect(judge([failed(0, 201), failed(1, 201), failed(2, 201), post(3)])).toEqual([]);
    expect(judge([failed(0, 400), failed(1, 404), failed(2, 422), post(3)])).toEqual([]);
    const ask = (atMs: number) => post(atMs, { method: 'GET', path: '/orders?ref=1', outcome: 503, answeredAtMs: atMs + 1 });
    expect(judge([ask(0), ask(1), ask(2), post(3)])).toEqual([]);
    // Sent before the 503s came back (hedges), not after them.
    expect(judge([failed(0), post(0.5, { outcome: 503, answeredAtMs: 50 }), post(0.7, { outcome: 503, answeredAtMs: 50 }), post(0.9)])).toEqual([]);
    // The query string aside, it is the same request.
    expect(judge([failed(0), failed(1), post(2, { path: '/orders?attempt=3', outcome: 503, answeredAtMs: 3 }), post(3)])).toHaveLength(1);
  });
});

describe('backoff on virtual time', () => {
  it('a client that retries its own timeouts at once is measured from the instant it gave up', async () => {
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'a network slower than the client\'s timeout', seed: 1,
      service: { variant: 'key_atomic', leaseMs: 60_000 }, client: { keySource: 'tool_call' },
      network: { latencyMeanMs: 3000 },
      operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
      expect: {},
    }));
    const r = await runClientScenario(s, hammerClient);
    const sent = r.workers[0]!.sent;
    expect(sent.map((q) => [q.outcome, q.abortedAtMs! - q.atMs])).toEqual(Array(5).fill(['aborted', 2000]));
    expect(r.violations.map((v) => v.detail)).toEqual(['op1.w0 retried 4 times after aborted outcomes without waiting: attempts at t=2000, 4000, 6000, 8000 ms']);
  });

  it('the hammering client fails on backoff alone at an early run; Full Jitter and the example\'s fixed client hold', async () => {
    const bad = await runClientCampaign({ client: hammerClient, runs: 300, seed: 1 });
    expect(bad.verdict).toBe('fails');
    expect(bad.firstFailureRun).toBeLessThanOrEqual(10);
    expect(bad.counterexample!.violations.map((v) => v.invariant)).toEqual(['backoff']);
    expect(bad.counterexample!.violations[0]!.detail).toMatch(/^op1\.w0 retried \d+ times after \S+ (answers|outcomes) without waiting: attempts at t=[\d., ]+ ms$/);
    for (const client of [jitteredClient, fixedClient]) {
      const good = await runClientCampaign({ client, runs: 300, seed: 1 });
      expect(good.verdict, `${client.name}: ${JSON.stringify(good.counterexample?.violations)}`).toBe('holds');
    }
  }, 120_000);
});
