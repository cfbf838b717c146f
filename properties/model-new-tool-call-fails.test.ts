import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('model-layer resubmission with tool_call keys fails', () => {
  it('a new tool_use_id is a new key: every answer of the first call lost, one resubmission, two reports', async () => {
    const cx = await expectFailsMinimally('key_atomic-tool_call-model_new_id-fails');
    expect(cx.size).toMatchObject({ operations: 1, workers: 1, attempts: 2 });
    expect(cx.scenario.client.model.resubmits).toBe(1);
  });
});
