import { describe, expect, it } from 'vitest';
import { runClientCampaign } from './campaign.js';
import { fixedClient } from '../../examples/fetch-retry-client/client.js';

/**
 * A time budget that runs out while a run is in flight: fast-check's time
 * limit goes on without the run (it races it against a timer), and the run
 * held the process-wide kernel clock. The campaign returns only once that run
 * has ended, and the run counts for nothing.
 */
describe('a client campaign stopped by its time budget', () => {
  it('returns with the real clock back, and the next campaign in the process runs', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await runClientCampaign({ client: fixedClient, runs: 100_000, seed: 1 + i, timeBudgetMs: 1 });
      expect(r.verdict).toBe('inconclusive');
      // The real clock: a run left behind would still have the kernel's installed (virtual ms since 0).
      expect(Date.now()).toBeGreaterThan(1.7e12); // real-time: allowed (the check that the fakes were released)
    }
    const full = await runClientCampaign({ client: fixedClient, runs: 20, seed: 1 });
    expect(full.verdict).toBe('holds');
    expect(full.runs).toBe(20);
  });
});
