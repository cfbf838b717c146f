import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { clientCases, runClientCase } from '../vitest.js';
import { runClientScenario, type RetryClient } from './run.js';
import { parseScenario } from '../scenario/load.js';
import { scenarioSize, type GeneratedCase } from '../scenario/arbitraries.js';
import { fixedClient as fixed } from '../../examples/fetch-retry-client/client.js';

/**
 * The `non-retryable` client check (SPEC §5: never retry an answer that says
 * retrying cannot help — 400, 401, 403, 404, 422) and the `network.answer`
 * fault that makes a service's front end send such answers.
 */

/** The fixed example client with one edit: it retries whatever status comes back. */
const retryAll: RetryClient = {
  name: 'retry-everything',
  deadlineMs: 12_000,
  async run(fetch, op) {
    const key = crypto.randomUUID();
    for (let attempt = 1; attempt <= 4; attempt++) {
      let wait = Math.min(2000, 100 * 2 ** attempt) * Math.random();
      try {
        const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(2000) });
        if (res.ok) return await res.json();
        const after = Number(res.headers.get('retry-after'));
        if (after > 0) wait = after * 1000;
      } catch (e) {
        if (!(e instanceof TypeError || (e instanceof DOMException && e.name === 'TimeoutError'))) throw e;
      }
      await new Promise((r) => setTimeout(r, wait));
    }
    throw new Error('gave up after 4 attempts');
  },
};

const answered = (status: number) => parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: `front end answers ${status}`, seed: 1,
  service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
  network: { answer: { status, count: 1 } },
  operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
  expect: {},
}));

describe('non-retryable: a retry client never retries 400/401/403/404/422', () => {
  it('the answer fault answers before the handler: nothing is written, the client sees the status', async () => {
    const r = await runClientScenario(answered(422), fixed);
    expect(r.workers[0]!.sent.map((s) => s.outcome)).toEqual([422]);
    expect(r.reports.op1).toBe(0);
    expect(r.violations).toEqual([]);
  });

  it('a client that retries a 400 or a 422 fails on non-retryable, and only on it', async () => {
    for (const status of [400, 422]) {
      const r = await runClientScenario(answered(status), retryAll);
      expect(r.violations.map((v) => v.invariant)).toEqual(['non-retryable']);
      expect(r.violations[0]!.detail).toMatch(new RegExp(`^op1\\.w0 got HTTP ${status} at t=\\d+ ms \\(retrying cannot help\\) and sent POST /reports again at t=\\d+ ms$`));
    }
  });

  it('retrying 408, 409, 429 and 503 is allowed: the same client holds there', async () => {
    for (const status of [408, 409, 429, 503]) {
      const r = await runClientScenario(answered(status), retryAll);
      expect(r.violations, String(status)).toEqual([]);
      expect(r.reports.op1).toBe(1);
    }
  });

  it('as a property over the client fault space: retry-everything fails on non-retryable, shrunk to one injected answer; the fixed client holds', async () => {
    const prop = (client: RetryClient) => fc.asyncProperty(clientCases(), async (c) => (await runClientCase(client, c)).violations.length === 0);
    const bad = await fc.check(prop(retryAll), { numRuns: 300, seed: 1 });
    expect(bad.failed).toBe(true);
    const [c] = bad.counterexample as [GeneratedCase];
    expect(c.scenario.network.answer?.count).toBe(1);
    expect(scenarioSize(c.scenario, 0).faults).toBe(1);
    expect((await runClientCase(retryAll, c)).violations.map((v) => v.invariant)).toEqual(['non-retryable']);
    const good = await fc.check(prop(fixed), { numRuns: 300, seed: 1 });
    expect(good.failed, String(good.counterexample && JSON.stringify((await runClientCase(fixed, good.counterexample[0] as GeneratedCase)).violations))).toBe(false);
  }, 120_000);
});
