import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('key_atomic whose lease never expires fails (progress)', () => {
  it('a killed request leaves its key in progress forever: once the faults stop, resubmitting still gets 409', async () => {
    const cx = await expectFailsMinimally('key_atomic_no_expiry-tool_call-fails');
    expect(cx.violations.find((v) => v.invariant === 'progress')!.detail).toMatch(/HTTP 409/);
    // Only a kill leaves a placeholder nobody cleans up.
    expect(cx.scenario.faults.kill).toBeDefined();
  });
});
