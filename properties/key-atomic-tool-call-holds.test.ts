/**
 * The headline claim: with key_atomic (lease + fencing token) and tool_call keys,
 * "exactly one report per logical operation" and SPEC §5's other invariants
 * hold for every generated scenario under every harness-layer fault. Its
 * canaries (the *-fails suites) run the same generator against known-wrong
 * variants and go red, so the faults demonstrably fire.
 */
import { describe, expect, it } from 'vitest';
import { claimById } from '../src/campaign/claims.js';
import { runCampaign } from '../src/campaign/run.js';
import { PROPERTY_SEED } from './support.js';

// Bounded for CI; `retrysim check --runs 100000` is the long campaign.
const RUNS = Number(process.env.RETRYSIM_PROPERTY_RUNS ?? 2000);

describe('key_atomic with fencing and tool_call keys holds', () => {
  it('invariants 1–5 (progress included) hold under lost responses, crashes, same-key concurrency, slow requests, kill and restart, pause past the lease (and a crash after it), clock offset, two instances, one key with two bodies, the same title in two runs and a lease raced by slow processing', async () => {
    const r = await runCampaign({ claim: claimById('key_atomic-tool_call-holds'), runs: RUNS, seed: PROPERTY_SEED });
    expect(r.error).toBeUndefined();
    expect(r.counterexample?.violations ?? []).toEqual([]);
    expect(r.verdict).toBe('holds');
    expect(r.runs).toBe(RUNS);
  });
});
