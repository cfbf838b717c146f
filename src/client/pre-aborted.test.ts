import { describe, expect, it } from 'vitest';
import { runClientScenario, type RetryClient } from './run.js';
import { parseScenario } from '../scenario/load.js';

/**
 * A fetch called with a signal that has already aborted puts nothing on the
 * wire: it rejects with the signal's reason at once. It used to be recorded
 * as a request sent (outcome `aborted`), so a call whose every attempt was
 * dead on arrival — one `AbortSignal.timeout` made per call and shared by
 * every retry, the usual way to misuse it with p-retry or async-retry —
 * passed `progress` without a byte sent, and a call that "retried" on a dead
 * signal after a 429 or a 400 failed `retry-after` / `non-retryable` for a
 * request no server saw.
 */
function scenario(faults: object, network: object = {}) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'pre-aborted', seed: 1,
    service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
    faults, network,
    operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
    expect: {},
  }));
}

/** One timeout for the whole call, shared by every attempt; waits `waitMs` before each attempt (a first jittered delay, then a backoff). */
function sharedSignal(firstWaitMs: number, retryWaitMs: number, timeoutMs: number): RetryClient {
  return {
    name: 'shared-signal', deadlineMs: 10_000,
    async run(fetch, op) {
      const key = crypto.randomUUID();
      const signal = AbortSignal.timeout(timeoutMs);
      if (firstWaitMs > 0) await new Promise((r) => setTimeout(r, firstWaitMs));
      for (let attempt = 1; attempt <= 3; attempt++) {
        try {
          const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal });
          if (res.ok) return await res.json();
          if (res.status < 500 && res.status !== 429) throw new Error(`HTTP ${res.status}`);
        } catch (e) {
          if ((e as Error).name === 'TimeoutError') throw e; // the call's budget is spent
          if ((e as Error).message.startsWith('HTTP')) throw e;
        }
        await new Promise((r) => setTimeout(r, retryWaitMs));
      }
      throw new Error('gave up');
    },
  };
}

describe('a fetch whose signal has already aborted sends nothing', () => {
  it('a call whose one timeout ran out before its first attempt fails progress: no request reached the wire', async () => {
    const r = await runClientScenario(scenario({}), sharedSignal(500, 100, 300));
    expect(r.workers[0]!.sent).toEqual([]);
    expect(r.workers[0]!.outcome).toBe('rejected');
    expect(r.violations.map((v) => v.invariant)).toEqual(['progress']);
  });

  it('a retry on a dead signal after a 429 is no early retry: retry-after holds, one request sent', async () => {
    // 429 with Retry-After: 1 at t≈2 ms; the client waits only 600 ms, but its 500 ms budget is spent by then.
    const r = await runClientScenario(scenario({}, { throttle: { count: 1, retryAfterS: 1 } }), sharedSignal(0, 600, 500));
    expect(r.workers[0]!.sent.map((q) => q.outcome)).toEqual([429]);
    expect(r.violations.map((v) => v.invariant)).not.toContain('retry-after');
  });

  it('a request aborted in flight is still a request sent (its answer may have been committed)', async () => {
    const r = await runClientScenario(scenario({ pause: { atStep: 'process', ms: 5000, count: 1 } }), sharedSignal(0, 100, 1000));
    expect(r.workers[0]!.sent.map((q) => q.outcome)).toEqual(['aborted']);
    expect(r.violations.map((v) => v.invariant)).not.toContain('progress');
  });
});
