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
  // A property over a real SQLite service: give it more than vitest's 5 s default on a busy machine.
  120_000,
);
