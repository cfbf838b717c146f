// StrykerJS, the src/campaign shard of `npm run mutate`: the judging path of
// a campaign — verdict words and exit codes, a claim's judgement, the scan
// and its failure predicate, run slicing, shard merge, bounded-exhaustive
// search, the coverage table and the small scenarios. Left out: pool.ts,
// job.ts and worker-bundle.ts (their code runs in worker threads, where a
// mutant planted in this process is not active), claims.ts (the claims'
// data: titles and fault lists, whose only logic is a lookup by id) and
// minimise.ts (its own shard). See docs/mutation.md, "Shard: src/campaign".
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  mutate: [
    'src/campaign/verdict.ts',
    'src/campaign/judge.ts',
    'src/campaign/run.ts',
    'src/campaign/runs.ts',
    'src/campaign/shard.ts',
    'src/campaign/exhaustive.ts',
    'src/campaign/coverage.ts',
    'src/campaign/small.ts',
  ],
  vitest: {
    // Only the fast in-process unit tests of these files (see the config).
    configFile: 'vitest.stryker.campaign.config.ts',
    related: false,
  },
  // Each mutant runs only the tests that executed its code in the dry run.
  coverageAnalysis: 'perTest',
  // Two cores shared with other work (and other shards).
  concurrency: 1,
  timeoutMS: 60_000,
  timeoutFactor: 2,
  // Re-runs only mutants whose code or covering tests changed since the
  // last run (the file is kept out of git).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental-campaign.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation-campaign/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation-campaign/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp-campaign',
  cleanTempDir: true,
};
