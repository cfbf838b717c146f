import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('key_atomic without the body fingerprint fails (id-exists)', () => {
  it('one key sent with a second body is answered with the first body’s report, which belongs to another run', async () => {
    const cx = await expectFailsMinimally('key_atomic_no_fingerprint-tool_call-fails');
    expect(cx.scenario.operations.some((o) => o.keyFrom !== undefined)).toBe(true);
  });
});
