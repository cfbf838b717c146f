// This property holds: the order, its key and the stored answer are written
// in one transaction, so there is no "in progress" state to leave behind —
// and once the faults stop, every order ends acknowledged (progress).
import { expect } from 'vitest';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import service from './service.js';

const module = new URL('./service.ts', import.meta.url);

test.prop([serviceCases(service, { module })], { ...replayable(service, { module }), numRuns: 1000, seed: 1 })(
  'every order is made exactly once and acknowledged once the faults stop, whatever is lost, slow, paused, killed or concurrent',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  // A bound, not a speed claim: a thousand runs on a loaded machine outlast vitest's 5 s default.
  120_000,
);
