import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('a fresh key per attempt fails', () => {
  it('dedups nothing: one lost response makes two reports, and the key changed between the attempts', async () => {
    const cx = await expectFailsMinimally('key_atomic-per_attempt-fails');
    expect(cx.size).toMatchObject({ operations: 1, workers: 1, faults: 1, attempts: 2 });
    expect(cx.violations.map((v) => v.invariant)).toContain('stable-key');
  });
});
