// This property FAILS, on purpose: the key's TTL is seconds added to
// Date.now()'s milliseconds, and the handler's Date.now() is the kernel's
// virtual clock, so a late retry finds the key expired. Run it to see
// retrysim's shrunk counterexample and the command that replays it.
import { expect } from 'vitest';
import { test, serviceCases, runServiceCase, replayable } from 'retrysim/vitest';
import service from './service.js';

const module = new URL('./service.ts', import.meta.url);

test.prop([serviceCases(service, { module })], { ...replayable(service, { module }), numRuns: 300, seed: 1 })(
  'every order is charged exactly once, however late the retry (the key TTL is computed from Date.now())',
  async (c) => {
    const run = await runServiceCase(service, c);
    expect(run.violations).toEqual([]);
  },
  // A bound, not a speed claim: a thousand runs (plus shrinking) on a loaded machine outlast vitest's 5 s default.
  120_000,
);
