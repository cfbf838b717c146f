import { expect, test } from 'vitest';
import { runServiceCampaign } from '../src/service/campaign.js';
import { loadService } from '../src/service/load.js';

const module = 'src/tracker/modules/key_atomic.ts';

/**
 * `progress` (SPEC §5 invariant 5) on a correct *leased* service: the
 * built-in key_atomic, loaded from a module path as a user's service is.
 * `check --service` generates slow steps at any declared step, including
 * before the claim, so a replay can be as slow as the first request: every
 * resubmission then times out although an earlier one made the report. A
 * well-behaved client asks before it resubmits (SPEC §4); before the
 * recovery phase did, this was refuted at run 45 of seed 1 with "1 report
 * exists" in the message.
 */
test('the correct key_atomic, as a user module under check --service, holds progress (it was refuted at run 45 of seed 1)', async () => {
  const def = await loadService(module);
  const r = await runServiceCampaign({ def, module, runs: 300, seed: 1 });
  expect(r.counterexample?.violations ?? []).toEqual([]);
  expect(r.verdict).toBe('holds');
}, 120_000);
