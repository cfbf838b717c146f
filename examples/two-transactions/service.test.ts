// This property FAILS, on purpose: the order is committed in one
// transaction and the key in a second, so a crash between them (answered
// 500) lets the client's retry create a second order. Run it to see
// retrysim's minimised counterexample and the command that replays it.
import { expect } from 'vitest';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import service from './service.js';

const module = new URL('./service.ts', import.meta.url);

// Crashes only: the counterexample is the crash window itself (one request, one crash, its retry).
test.prop([serviceCases(service, { module, faults: ['crash'] })], { ...replayable(service, { module }), numRuns: 300, seed: 1 })(
  'every order is created exactly once, whatever crashes',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  // A bound, not a speed claim: runs plus shrinking on a loaded machine outlast vitest's 5 s default.
  120_000,
);
