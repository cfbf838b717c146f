/**
 * A fetch retry client with the classic subtle bug: it makes up a new
 * Idempotency-Key for every attempt. Each attempt looks idempotent on its
 * own, but a retry after a lost answer (the server committed, the client
 * never heard) is a brand-new request to the server: a second payment.
 * `fixedClient` is the same code with the key made once per operation.
 */
import type { RetryClient } from 'retrysim';

const RETRYABLE = new Set([409, 429, 500, 502, 503, 504]);

function makeClient(keyPerAttempt: boolean): RetryClient {
  return {
    name: keyPerAttempt ? 'fetch-retry-client' : 'fetch-retry-client-fixed',
    deadlineMs: 12_000,
    async run(fetch, op) {
      let key = crypto.randomUUID();
      for (let attempt = 1; attempt <= 4; attempt++) {
        if (keyPerAttempt && attempt > 1) key = crypto.randomUUID(); // the bug: "fresh request, fresh key"
        let wait = Math.min(2000, 100 * 2 ** attempt) * Math.random();
        try {
          const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(2000) });
          if (res.ok) return await res.json();
          if (!RETRYABLE.has(res.status)) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
          const after = Number(res.headers.get('retry-after'));
          if (after > 0) wait = after * 1000;
        } catch (e) {
          // A timeout or a reset: the outcome is unknown, so retry (with the same key, when fixed).
          if (!(e instanceof TypeError || (e instanceof DOMException && e.name === 'TimeoutError'))) throw e;
        }
        await new Promise((r) => setTimeout(r, wait));
      }
      throw new Error('gave up after 4 attempts: the payment may exist; query before resubmitting');
    },
  };
}

/** The client with the bug. */
export const buggyClient = makeClient(true);
/** The fix: one key per logical operation, made once, sent on every attempt. */
export const fixedClient = makeClient(false);
export default buggyClient;
