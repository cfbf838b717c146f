// This property FAILS, on purpose: three requests with one key at once —
// owner, follower, and a third that takes the key over — charge twice.
import { expect } from 'vitest';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import service from './service.js';

const module = new URL('./service.ts', import.meta.url);

test.prop([serviceCases(service, { module })], { ...replayable(service, { module }), numRuns: 500, seed: 1 })(
  'every order is charged exactly once, however many copies of a request arrive at once',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  // A bound, not a speed claim: runs plus shrinking on a loaded machine outlast vitest's 5 s default.
  120_000,
);
