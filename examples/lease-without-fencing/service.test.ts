// This property FAILS, on purpose: a request that stalls past its lease
// finishes after another request took its key over — no fencing token
// stops its second charge.
import { expect } from 'vitest';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import service from './service.js';

const module = new URL('./service.ts', import.meta.url);

test.prop([serviceCases(service, { module })], { ...replayable(service, { module }), numRuns: 2000, seed: 1 })(
  'every order is charged exactly once, even when a request stalls past its lease',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  // A bound, not a speed claim: a thousand runs (plus shrinking) on a loaded machine outlast vitest's 5 s default.
  120_000,
);
