// This property FAILS, on purpose: every order is created exactly once, but
// a retry is answered 200 where the first answer was 201 (replay-equals-first).
import { expect } from 'vitest';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import service from './service.js';

const module = new URL('./service.ts', import.meta.url);

test.prop([serviceCases(service, { module })], { ...replayable(service, { module }), numRuns: 300, seed: 1 })(
  'a retry of an order is answered exactly as the first attempt was',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  // A bound, not a speed claim: runs plus shrinking on a loaded machine outlast vitest's 5 s default.
  120_000,
);
