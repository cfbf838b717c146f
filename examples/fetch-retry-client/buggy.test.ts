// This property FAILS, on purpose: the client makes a new Idempotency-Key
// for every attempt, so a retry after a lost answer pays a second time.
import { expect } from 'vitest';
import { test, clientCases, runClientCase, explainClient } from 'retrysim/vitest';
import { buggyClient } from './client.js';

test.prop([clientCases()], { ...explainClient(buggyClient), numRuns: 300, seed: 1 })(
  'one key per operation, one payment per order, done within the deadline',
  async (c) => {
    expect((await runClientCase(buggyClient, c)).violations).toEqual([]);
  },
  // A bound, not a speed claim (vitest's default is 5 s).
  120_000,
);
