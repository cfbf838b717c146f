import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('key_split (two commits) fails on a crash between them', () => {
  it('one crash after the report commit, before the key is registered: the retry files a second report; no preemption needed', async () => {
    const cx = await expectFailsMinimally('key_split-tool_call-crash-fails');
    expect(cx.size).toMatchObject({ operations: 1, workers: 1, faults: 1, attempts: 2, preemptions: 0 });
    expect(cx.scenario.faults.crashMidRequest).toBe(1);
  });
});
