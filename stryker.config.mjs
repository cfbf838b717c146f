// StrykerJS: `npm run mutate`. Mutation testing of the code whose verdicts
// the project sells — the write strategies, the invariant checkers, the
// choice sources and the key sources. Too slow for CI (see docs/mutation.md
// for the timing); run it before changing any of these files.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: ['src/tracker/strategies/*.ts', 'src/checkers/*.ts', 'src/sim/choice/*.ts', 'src/harness/keys.ts', '!src/**/*.test.ts'],
  vitest: {
    // Only the suites that exercise these files in-process (see the config
    // for why); `related` would pull in nearly every suite through imports.
    configFile: 'vitest.stryker.config.ts',
    related: false,
  },
  // Each mutant runs only the tests that executed its code in the dry run.
  coverageAnalysis: 'perTest',
  // The machine has 2 cores shared with other work.
  concurrency: 2,
  timeoutMS: 60_000,
  timeoutFactor: 2,
  // Re-runs only mutants whose code or covering tests changed since the
  // last run (the file is kept out of git).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
