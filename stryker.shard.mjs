// What every shard of `npm run mutate` shares (stryker.config.mjs,
// stryker.campaign.config.mjs, stryker.recovery.config.mjs): the vitest
// runner on the shard's own list of fast in-process suites, per-test
// coverage, incremental re-runs, and reports, incremental file and sandbox
// named after the shard so shards can run side by side.

/**
 * @param {{ name?: string, mutate: string[], vitestConfig: string, concurrency: number }} s
 *   `name` suffixes the shard's files (none: the core shard's historical paths)
 * @returns {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export function shard({ name, mutate, vitestConfig, concurrency }) {
  const suffix = name === undefined ? '' : `-${name}`;
  return {
    testRunner: 'vitest',
    plugins: ['@stryker-mutator/vitest-runner'],
    mutate,
    vitest: {
      // Only the suites listed there: `related` would pull in nearly every suite through imports.
      configFile: vitestConfig,
      related: false,
    },
    // Each mutant runs only the tests that executed its code in the dry run.
    coverageAnalysis: 'perTest',
    // The machine has 2 cores shared with other work (and other shards).
    concurrency,
    timeoutMS: 60_000,
    timeoutFactor: 2,
    // Re-runs only mutants whose code or covering tests changed since the
    // last run (the file is kept out of git, under reports/).
    incremental: true,
    incrementalFile: `reports/stryker-incremental${suffix}.json`,
    reporters: ['clear-text', 'progress', 'html', 'json'],
    htmlReporter: { fileName: `reports/mutation${suffix}/mutation.html` },
    jsonReporter: { fileName: `reports/mutation${suffix}/mutation.json` },
    thresholds: { high: 90, low: 80, break: null },
    tempDirName: `.stryker-tmp${suffix}`,
    cleanTempDir: true,
  };
}
