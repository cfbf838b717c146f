import { describe, expect, it } from 'vitest';
import { fc, replayable, runServiceCase, serviceCases } from './vitest.js';
import payments from '../examples/payments-atomic/service.js';

/**
 * fast-check's `interruptAfterTimeLimit` goes on without the run in flight
 * (it races it against a timer). That run held the process-wide kernel
 * clock, and the next property's first case failed with "another run's
 * kernel clock is installed": a false failure of a correct service. Runs of
 * the helper start after the run before has ended.
 */
describe('a property stopped by interruptAfterTimeLimit', () => {
  it('leaves nothing behind: the next property on the same service passes', async () => {
    const module = 'examples/payments-atomic/service.ts';
    const svc = { ...payments }; // this test's own object (shrink limits are per object)
    const params = replayable(svc, { module });
    for (let i = 0; i < 3; i++) {
      const stopped = await fc.check(fc.asyncProperty(serviceCases(svc, { module }), async (c) => (await runServiceCase(svc, c)).violations.length === 0), { ...params, numRuns: 1_000_000, seed: 1 + i, interruptAfterTimeLimit: 30, markInterruptAsFailure: false });
      // (Interrupted before its first run ended, fast-check calls it failed with no counterexample: nothing failed.)
      expect(stopped.interrupted).toBe(true);
      expect(stopped.counterexample).toBeNull();
      const next = await fc.check(fc.asyncProperty(serviceCases(svc, { module }), async (c) => (await runServiceCase(svc, c)).violations.length === 0), { ...params, numRuns: 5, seed: 1 });
      expect(next.errorInstance ?? null).toBeNull();
      expect(next.failed).toBe(false);
    }
  });
});
