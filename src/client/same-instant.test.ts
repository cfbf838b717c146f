import { describe, expect, it } from 'vitest';
import type { RetryClient } from './run.js';
import { runClientCampaign, CLIENT_FAULTS } from './campaign.js';

/** "Unique enough": the millisecond the call started (exponential-backoff's README examples, many checkout snippets). */
const clockKey: RetryClient = {
  name: 'clock-key',
  deadlineMs: 30_000,
  async run(fetch, op) {
    const key = `order-${Date.now()}`;
    const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(2000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    return res.json();
  },
};

describe('two operations started in the same millisecond (the sameInstant dimension)', () => {
  it('a key made from Date.now() fails key-reuse, shrunk to two operations and no fault; without the dimension the same client held', async () => {
    const r = await runClientCampaign({ client: clockKey, runs: 100, seed: 1 });
    expect(r.verdict).toBe('fails');
    const ce = r.counterexample!;
    expect(ce.violations.map((x) => x.invariant)).toEqual(['key-reuse']);
    expect(ce.size).toMatchObject({ operations: 2, faults: 0 });
    expect(new Set(ce.scenario.operations.map((o) => o.startMs)).size).toBe(1);
    const without = await runClientCampaign({ client: clockKey, runs: 100, seed: 1, faults: CLIENT_FAULTS.filter((f) => f !== 'sameInstant') });
    expect(without.verdict).toBe('holds');
    expect(without.coverage?.rows.some((x) => x.id === 'client:same-instant')).toBe(false);
  }, 60_000);
});
