// This property holds: one key per operation, made once and sent on every attempt.
// With the module named, a pass is checked again with it loaded once per call, as separate client processes load it.
import { expect } from 'vitest';
import { test, clientCases, runClientCase, explainClient } from 'retrysim/vitest';
import { fixedClient } from './client.js';

test.prop([clientCases()], { ...explainClient(fixedClient, { module: new URL('./client.ts', import.meta.url) }), numRuns: 300, seed: 1 })(
  'one key per operation, one payment per order, done within the deadline',
  async (c) => {
    expect((await runClientCase(fixedClient, c)).violations).toEqual([]);
  },
  // A bound, not a speed claim (vitest's default is 5 s).
  120_000,
);
