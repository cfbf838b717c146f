import { defineConfig } from 'vitest/config';

/**
 * The suites the src/campaign shard of mutation testing
 * (stryker.campaign.config.mjs) runs against each mutant: unit tests that
 * drive the judging files in this process with small run counts, each file
 * in a few seconds. Left out: the CLI suites (check, merge, check
 * --exhaustive, inconclusive: they run `retrysim` in a child process, where
 * no mutant is active), coverage.test.ts (its main-job test spawns the CLI
 * for 15 s), reduction.test.ts (every schedule of every small scenario
 * twice: 25 s) and the canary property suites (thousands of runs; a
 * surviving mutant would pay for them in full). A mutant those would kill
 * and these do not is a missing unit test.
 */
export default defineConfig({
  test: {
    include: [
      'src/campaign/verdict.test.ts',
      'src/campaign/judge.test.ts',
      'src/campaign/run.test.ts',
      'src/campaign/runs.test.ts',
      'src/campaign/shard.test.ts',
      'src/campaign/shard-merge.test.ts',
      'src/campaign/exhaustive.test.ts',
      'src/campaign/coverage-table.test.ts',
      'src/campaign/small.test.ts',
    ],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
