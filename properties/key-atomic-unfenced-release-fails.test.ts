import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('key_atomic whose crashed request frees the key without its fence fails (exactly-one)', () => {
  it('a stalled request taken over, then crashing, deletes the finished key: a later request files a second report', async () => {
    const cx = await expectFailsMinimally('key_atomic_unfenced_release-tool_call-fails');
    expect(cx.scenario.faults.pause?.thenCrash).toBe(true);
  });
});
