// This property FAILS, on purpose: the service creates the order before
// recording its key, and a twin request's key INSERT throws on the UNIQUE
// constraint only after its order was committed (the throw answers 500).
// Run it to see retrysim's shrunk counterexample and the command that
// replays it.
import { expect } from 'vitest';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import service from './service.js';

const module = new URL('./service.ts', import.meta.url);

test.prop([serviceCases(service, { module })], { ...replayable(service, { module }), numRuns: 300, seed: 1 })(
  'every order is created exactly once, even when twin requests race to the UNIQUE constraint',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  // A bound, not a speed claim: a thousand runs (plus shrinking) on a loaded machine outlast vitest's 5 s default.
  120_000,
);
