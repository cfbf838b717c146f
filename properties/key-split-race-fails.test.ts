import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('key_split (lookup, insert, then register) fails under pure concurrency', () => {
  it('two workers with one key, no fault: both pass the lookup before either registers; shrinks to one preemption', async () => {
    const cx = await expectFailsMinimally('key_split-tool_call-race-fails');
    expect(cx.size).toMatchObject({ operations: 1, workers: 2, faults: 0, attempts: 2, preemptions: 1, nonDefault: 1 });
    // The one preemption: a request has passed its lookup and the other
    // request is let in before the first registers the key.
    const p = cx.scenario.schedule.find((c) => c.preempted)!;
    expect(p.of[0]).toMatch(/#\d+:(process|insert|register)$/);
    expect(p.of[p.chosen]).toMatch(/^s0\/op1\.w\d#\d+:(sleep|check)$/);
  });
});
