import { defineConfig } from 'vitest/config';

/**
 * The suites `stryker.recovery.config.mjs` runs against each mutant of the
 * recovery phase, the minimiser, the client checks and replay divergence:
 * only suites that drive those files *in this process* and finish in
 * seconds. Suites that run the CLI in child processes cannot see a mutant;
 * the holding claims' campaigns (progress-leased/-unleased, 13–40 s) would
 * be paid in full by every surviving mutant. A mutant only they would kill
 * is a missing unit test.
 */
export default defineConfig({
  test: {
    include: [
      'src/scenario/recovery.test.ts',
      'src/campaign/minimise*.test.ts',
      'src/client/{checks,checks-boundaries,run,non-retryable,backoff,resolved-without-effect}.test.ts',
      'src/checkers/progress.test.ts',
      'src/checkers/replay.test.ts',
    ],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
