import { describe, expect, it } from 'vitest';
import { expectFailsMinimally } from './support.js';

describe('model-layer resubmission with business keys and a reworded title fails', () => {
  it('a reworded title is a new business key: one resubmission, two reports', async () => {
    const cx = await expectFailsMinimally('key_atomic-business-model_reword-fails');
    expect(cx.size).toMatchObject({ operations: 1, workers: 1, attempts: 2 });
    expect(cx.scenario.client.model).toEqual({ resubmits: 1, reword: true });
  });
});
