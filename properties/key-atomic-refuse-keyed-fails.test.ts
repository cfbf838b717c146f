import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('a service that answers 409 to every keyed write fails (progress)', () => {
  it('safe by doing nothing: invariants 1–4 hold, progress does not', async () => {
    const cx = await expectFailsMinimally('key_atomic_refuse_keyed-tool_call-fails');
    expect(cx.violations.map((v) => v.invariant)).toEqual(['progress']);
  });
});
