import { defineConfig } from 'vitest/config';

/**
 * The suites `npm run mutate` (StrykerJS) runs against each mutant: the
 * suites that drive the mutated files *in this process* and finish in a few
 * seconds — the unit tests of the tracker, checkers, harness keys, choice
 * sources, kernel and exploration, the scenario tests (every checked-in
 * file replayed against its recorded schedule), and the property suite of
 * every canary claim. Left out: suites that run the CLI or the herd in child
 * processes or worker threads (a mutant is only active in the process
 * Stryker instrumented, so they could never kill one), the browser and pack
 * tests, and the slow property suites (the holding claims' campaigns,
 * determinism, exploration, minimal preemptions, search mechanisms: 13–40 s
 * each, which a surviving mutant would pay in full). A mutant those would
 * kill and these do not is a missing unit test — which is the point.
 */
export default defineConfig({
  test: {
    include: [
      'src/tracker/*.test.ts',
      'src/checkers/*.test.ts',
      'src/harness/*.test.ts',
      'src/scenario/{behaviours,replay-strict,files,load}.test.ts',
      'src/sim/choice/*.test.ts',
      'src/sim/kernel.test.ts',
      'src/sim/explore/*.test.ts',
      'src/campaign/pct.test.ts',
      'src/service/service-errors.test.ts',
      'properties/*-{fails,fail}.test.ts',
      'properties/scenario-files.test.ts',
    ],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
