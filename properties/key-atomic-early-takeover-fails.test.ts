import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('key_atomic taking over after half the lease fails (progress)', () => {
  it('each retry takes over the live request before it and fencing rejects every finish: no report, ever', async () => {
    const cx = await expectFailsMinimally('key_atomic_early_takeover-tool_call-fails');
    const s = cx.scenario;
    // Processing outlasts half the lease but the lease itself is safe (SPEC §3's rule), so key_atomic would wait.
    expect(s.faults.slowMs).toBeGreaterThan(s.service.leaseMs / 2);
    expect(s.service.leaseMs).toBeGreaterThan(s.client.timeoutMs + s.faults.slowMs);
  });
});
