import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('memory_singleflight fails across a restart or two instances', () => {
  it('loses its completed map on restart and is not shared by a second instance; shrinks to one operation, one worker', async () => {
    const cx = await expectFailsMinimally('memory_singleflight-tool_call-fails');
    expect(cx.size.operations).toBe(1);
    expect(cx.size.workers).toBe(1);
    // It takes a restart or a second instance: one process alone would dedup.
    expect(cx.scenario.service.instances > 1 || cx.scenario.faults.kill !== undefined).toBe(true);
  });
});
