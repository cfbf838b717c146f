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
  // A property over a real SQLite service: give it more than vitest's 5 s default on a busy machine.
  120_000,
);
