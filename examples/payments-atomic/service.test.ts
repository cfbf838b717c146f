// This property holds: the key is claimed atomically before any work and
// the payment is written in the same transaction that marks the key done.
import { expect } from 'vitest';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import service from './service.js';

const module = new URL('./service.ts', import.meta.url);

test.prop([serviceCases(service, { module })], { ...replayable(service, { module }), numRuns: 1000, seed: 1 })(
  'every order is charged exactly once, whatever is lost, slow, paused, killed or concurrent',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  // A bound, not a speed claim: a thousand runs (plus shrinking) on a loaded machine outlast vitest's 5 s default.
  120_000,
);
