/**
 * `conformance --service` compares the two worlds at the same moment. The
 * simulation counts an operation's effects and judges invariants 1–4 on the
 * database the main run left (progress after its recovery phase); the real
 * side read the file only after its recovery phase, so a service whose
 * recovery resubmission pays (a lease that expires) showed "0 | 1" and a
 * difference, exit 1, where both worlds had done the same.
 */
import { describe, expect, it } from 'vitest';
import { loadService } from '../service/load.js';
import { runServiceConformance } from './service-conformance.js';

describe('conformance --service with a recovery phase: both worlds read the main run\'s effects', () => {
  it('a lease that expires, killed at charge: no payment after the main run in either world, and the recovery resubmits in both', async () => {
    const module = 'src/real/fixtures/lease-expires.ts';
    const [claim, charge] = await runServiceConformance({ def: await loadService(module), module, columns: ['kill_at:charge', 'kill_at:claim'] });
    expect(charge).toMatchObject({ column: 'kill_at:charge', same: true, sim: { effects: 0, eventually: 'resubmitted' }, real: { effects: 0, eventually: 'resubmitted', kills: 1 } });
    expect(charge!.sim.violations).toEqual(charge!.real.violations);
    // A kill before the claim: the main run's retries pay once the process is back; nothing for recovery to do.
    expect(claim).toMatchObject({ column: 'kill_at:claim', same: true, sim: { effects: 1, violations: [], eventually: 'succeeded' }, real: { effects: 1, violations: [], eventually: 'succeeded' } });
  }, 120_000);
});
