/**
 * `flaky --client` on the wall clock sends the service's operation.headers
 * (its credentials) as the simulation does: a client that resolves whatever
 * the answer breaks nothing against the authenticated service when its
 * requests are let in, and would break exactly-one on every wall-clock run
 * if they were answered 401 (nothing made, "done" said).
 */
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';

describe('flaky --client against an authenticated service', () => {
  it('the wall clock\'s requests carry operation.headers: every run makes its order, no check fails on any side', async () => {
    const r = await runMain(['flaky', '--client', 'src/client/fixtures/resolves-anyway.ts', '--service', 'src/service/fixtures/authed-orders.ts', '--runs', '3', '--json']);
    expect(r.code, r.err).toBe(0);
    const j = JSON.parse(r.out) as { wallClock: { runs: number; failures: number; byCheck: Record<string, number> }; virtualTime: { failures: number } };
    expect(j.wallClock).toMatchObject({ runs: 3, failures: 0, byCheck: {} });
    expect(j.virtualTime.failures).toBe(0);
  }, 120_000);
});
