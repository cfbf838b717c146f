import { describe, expect, it } from 'vitest';
import { runClientScenario, type RetryClient } from './run.js';
import { parseScenario } from '../scenario/load.js';

/**
 * One key names one request: a retry that sends the key with another body
 * (an `onRetry` / `onFailedAttempt` hook that stamps the attempt number or
 * the time into the payload) is, to the service, the key reused for a
 * different request — refused (422) by one that fingerprints bodies,
 * answered with the first request's result by one that does not. Either
 * way the caller is told something about a request that was never run. It
 * used to hold every check: the service kept one effect, and nothing
 * compared what one key carried.
 */
function lostAnswer() {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'one lost answer', seed: 1,
    service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
    faults: { loseResponseAfterCommit: 1 },
    operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
    expect: {},
  }));
}

/** Retries a lost answer once with the same key; `bodyOf(payload, attempt)` is what each attempt sends. */
function client(name: string, bodyOf: (payload: Record<string, unknown>, attempt: number) => string): RetryClient {
  return {
    name, deadlineMs: 10_000,
    async run(fetch, op) {
      const key = crypto.randomUUID();
      const payload = JSON.parse(op.body) as Record<string, unknown>;
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: bodyOf(payload, attempt), signal: AbortSignal.timeout(2000) });
          return await res.text();
        } catch (e) {
          if (attempt === 3) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
  };
}

describe('key-reuse: one key, one body', () => {
  it('a retry that stamps the attempt into the body under the same key fails key-reuse at the retry', async () => {
    const r = await runClientScenario(lostAnswer(), client('stamps-attempt', (p, attempt) => JSON.stringify(attempt === 1 ? p : { ...p, steps: `${String(p.steps)} (retry ${attempt})` })));
    const sent = r.workers[0]!.sent;
    expect(sent).toHaveLength(2);
    expect(new Set(sent.map((q) => q.key)).size).toBe(1);
    expect(r.violations.map((v) => [v.invariant, v.detail])).toEqual([[
      'key-reuse',
      `op1.w0 sent Idempotency-Key ${sent[0]!.key} at t=${sent[1]!.atMs} ms with another body than it carried at t=${sent[0]!.atMs} ms: to the service the key names a different request (refused 422 where bodies are fingerprinted, answered with the first one's result where not)`,
    ]]);
  });

  it('a GET with the same key asking whether the operation took effect is another request, not the key with another body: holds', async () => {
    const asks: RetryClient = {
      name: 'asks', deadlineMs: 10_000,
      async run(fetch, op) {
        const key = crypto.randomUUID();
        const headers = { ...op.headers, 'idempotency-key': key };
        try {
          return await (await fetch(op.url, { method: op.method, headers, body: op.body, signal: AbortSignal.timeout(2000) })).text();
        } catch {
          await (await fetch(`${op.url}?status=1`, { method: 'GET', headers })).text();
          return await (await fetch(op.url, { method: op.method, headers, body: op.body, signal: AbortSignal.timeout(2000) })).text();
        }
      },
    };
    const r = await runClientScenario(lostAnswer(), asks);
    expect(r.workers[0]!.sent.map((q) => q.method)).toEqual(['POST', 'GET', 'POST']);
    expect(r.violations.map((v) => v.invariant)).not.toContain('key-reuse');
  });

  it('the same body in another key order or spacing is the same request: holds', async () => {
    const r = await runClientScenario(lostAnswer(), client('reorders', (p, attempt) => (attempt === 1 ? JSON.stringify(p) : JSON.stringify(Object.fromEntries(Object.entries(p).reverse()), null, 2))));
    expect(r.workers[0]!.sent).toHaveLength(2);
    expect(r.violations).toEqual([]);
  });
});

describe('the page pins it', () => {
  it('key-reuse with another body breaks at the retry that carries it', async () => {
    const { observeRun } = await import('../report/html/stepper-data.js');
    const s = lostAnswer();
    const c = client('stamps-attempt', (p, attempt) => JSON.stringify(attempt === 1 ? p : { ...p, steps: `${String(p.steps)} (retry ${attempt})` }));
    const { data, run } = await observeRun(s, {}, undefined, (observe) => runClientScenario(s, c, { observe }), { name: c.name, workers: (r) => r.workers });
    const v = data.violations.find((x) => x.invariant === 'key-reuse')!;
    const at = data.steps[v.step]!;
    expect(at.kind).toBe('request');
    expect(at.t).toBe(run.workers[0]!.sent[1]!.atMs);
    expect(v.why).toBe('op1.w0 sends here its key with another body than before: the service takes it for a different request under a used key');
  });
});
