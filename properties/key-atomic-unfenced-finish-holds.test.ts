/**
 * A finding, kept as a claim: key_atomic whose finish UPDATE keeps
 * `status = 'in_progress'` but drops `fence = ?` still holds 1–5. The finish
 * inserts the report and flips the key to done in one transaction, a done
 * key is never deleted or taken over, and the claim refuses a second body
 * (422) — so at most one finish per key can ever commit, whoever holds the
 * fence. The status test is itself a fence here; the fence's canary is
 * key_atomic_nofence, whose finish has neither (properties/key-atomic-nofence-fails).
 */
import { describe, expect, it } from 'vitest';
import { claimById } from '../src/campaign/claims.js';
import { runCampaign } from '../src/campaign/run.js';
import { PROPERTY_SEED } from './support.js';

const RUNS = Number(process.env.RETRYSIM_PROPERTY_RUNS ?? 2000);

describe('key_atomic with a status-only finish guard holds', () => {
  it('invariants 1–5 hold under every fault the key_atomic claims use', async () => {
    const r = await runCampaign({ claim: claimById('key_atomic_unfenced_finish-tool_call-holds'), runs: RUNS, seed: PROPERTY_SEED });
    expect(r.error).toBeUndefined();
    expect(r.counterexample?.violations ?? []).toEqual([]);
    expect(r.verdict).toBe('holds');
  });
});
