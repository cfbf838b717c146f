import { describe, expect, test } from 'vitest';
import { runServiceCampaign } from '../src/service/campaign.js';
import replayDiffers from '../examples/replay-differs/service.js';
import paymentsAtomic from '../examples/payments-atomic/service.js';

/**
 * SPEC §5 invariant 6 on whole campaigns: a service that answers a replay
 * with another status (200 where the first was 201) fails on
 * `replay-equals-first` — and only on it — while one that stores and replays
 * its first answer verbatim holds.
 */
describe('replay-equals-first', () => {
  test('a service answering replays 200 {"id":n} after a first 201 {"id":n} fails on replay-equals-first alone', async () => {
    const r = await runServiceCampaign({ def: replayDiffers, module: 'examples/replay-differs/service.ts', runs: 300, seed: 1 });
    expect(r.verdict).toBe('fails');
    expect([...new Set(r.counterexample!.violations.map((v) => v.invariant))]).toEqual(['replay-equals-first']);
    expect(r.counterexample!.size).toMatchObject({ operations: 1, faults: 0 });
  });

  test('a service that replays its stored answer verbatim holds', async () => {
    const r = await runServiceCampaign({ def: paymentsAtomic, module: 'examples/payments-atomic/service.ts', runs: 300, seed: 1 });
    expect(r.verdict).toBe('holds');
  });
});
