import { describe, expect, it } from 'vitest';
import { runClientScenario, type RetryClient } from './run.js';
import { parseScenario } from '../scenario/load.js';

/**
 * "The payment may exist; query before resubmitting" (the example client's
 * own advice): after a lost answer the client asks with a GET, without the
 * Idempotency-Key a GET has no use for, then sends the operation again
 * with its key. The GET was judged as one more attempt of the operation,
 * so the call "sent 2 different keys" (its key and none) and failed
 * `stable-key`. The operation's checks now judge the operation's own
 * requests (its method and path); every request still counts for
 * `progress` and `deadline`.
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

function asks(newKeyOnResubmit: boolean): RetryClient {
  return {
    name: 'asks-first', deadlineMs: 10_000,
    async run(fetch, op) {
      const key = crypto.randomUUID();
      const post = (k: string) => fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': k }, body: op.body, signal: AbortSignal.timeout(2000) });
      try {
        return await (await post(key)).text();
      } catch {
        await (await fetch(`${op.url}/${op.id}`, { headers: op.headers })).text();
        return await (await post(newKeyOnResubmit ? crypto.randomUUID() : key)).text();
      }
    },
  };
}

describe('a status query between attempts is not an attempt', () => {
  it('a keyless GET before resubmitting with the same key: holds, three requests sent', async () => {
    const r = await runClientScenario(lostAnswer(), asks(false));
    expect(r.workers[0]!.sent.map((q) => [q.method, q.key === undefined])).toEqual([['POST', false], ['GET', true], ['POST', false]]);
    expect(r.violations).toEqual([]);
  });

  it('the same with a new key on the resubmission still fails stable-key (and exactly-one)', async () => {
    const r = await runClientScenario(lostAnswer(), asks(true));
    expect(r.violations.map((v) => v.invariant).sort()).toEqual(['exactly-one', 'stable-key']);
  });
});
