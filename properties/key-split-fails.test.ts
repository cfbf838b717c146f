import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('key_split (two commits) fails', () => {
  it('duplicates when it crashes between its commits or two requests race past the lookup; shrinks to one operation and one fault', async () => {
    const cx = await expectFailsMinimally('key_split-tool_call-fails');
    expect(cx.size.operations).toBe(1);
    expect(cx.size.faults + cx.size.workers - 1).toBe(1);
  });
});
