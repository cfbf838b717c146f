import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('key_atomic with fencing off fails', () => {
  it('a request taken over after its lease still commits a second report; shrinks to one operation and timing faults only', async () => {
    const cx = await expectFailsMinimally('key_atomic_nofence-tool_call-fails');
    expect(cx.size.operations).toBe(1);
    const s = cx.scenario;
    // What makes the first holder outlive its lease is timing (slow processing,
    // a pause, a kill) — never a lost response or a crash.
    expect(s.faults.loseResponseAfterCommit + s.faults.crashMidRequest + s.network.loseResponses).toBe(0);
    expect((s.faults.slowMs > 0 ? 1 : 0) + (s.faults.pause ? 1 : 0) + (s.faults.kill ? 1 : 0)).toBeGreaterThanOrEqual(1);
  });
});
