import { describe, expect, it } from 'vitest';
import { runClientScenario, type RetryClient } from './run.js';
import { parseScenario } from '../scenario/load.js';

/**
 * A client may be patient for longer than an hour (a webhook sender, a batch
 * job: p-retry with minTimeout in minutes). The run's time limit used to be
 * one virtual hour whatever the client's deadline, so a correct client whose
 * backoff ran past it was refused as "the run never ends … one that never
 * stops retrying" (exit 2). The limit now reaches past the last call's
 * deadline: a call is stopped 1 ms after it anyway.
 */
function answered503() {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'one 503', seed: 1,
    service: { variant: 'key_atomic' }, client: { keySource: 'tool_call' },
    network: { answer: { status: 503, count: 1 } },
    operations: [{ id: 'op1', runId: 'order-1', module: 'shop', title: 'Pay order 1' }],
    expect: {},
  }));
}

/** Retries once after `waitMs`, with one key; `deadlineMs` leaves room for it. */
function patient(waitMs: number, deadlineMs: number): RetryClient {
  return {
    name: 'patient', deadlineMs,
    async run(fetch, op) {
      const key = crypto.randomUUID();
      for (let attempt = 1; ; attempt++) {
        const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(10_000) });
        if (res.ok) return res.json();
        if (attempt === 2) throw new Error(`HTTP ${res.status}`);
        await new Promise((r) => setTimeout(r, waitMs));
      }
    },
  };
}

describe('a client patient for hours', () => {
  it('a retry 90 min after a 503, within a 3 h deadline, holds (it is not taken for a run that never ends)', async () => {
    const r = await runClientScenario(answered503(), patient(90 * 60_000, 3 * 3_600_000));
    expect(r.violations).toEqual([]);
    expect(r.workers[0]!.sent.map((q) => [Math.round(q.atMs / 60_000), q.outcome])).toEqual([[0, 503], [90, 201]]);
  });

  it('the same retry past a 1 h deadline fails deadline, stopped 1 ms past it', async () => {
    const r = await runClientScenario(answered503(), patient(90 * 60_000, 3_600_000));
    expect(r.workers[0]).toMatchObject({ outcome: 'stopped', endMs: 3_600_001 });
    expect(r.violations.map((v) => v.invariant)).toEqual(['deadline']);
  });
});
