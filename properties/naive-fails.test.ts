import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('naive (no keys) fails', () => {
  it('duplicates a report after one lost response; shrinks to one operation, one lost response, two attempts', async () => {
    const cx = await expectFailsMinimally('naive-none-fails');
    const s = cx.scenario;
    expect(s.operations).toHaveLength(1);
    expect(s.operations[0]!.workers).toBe(1);
    expect(s.faults.loseResponseAfterCommit + s.network.loseResponses).toBe(1);
    expect(cx.size.attempts).toBe(2);
  });
});
