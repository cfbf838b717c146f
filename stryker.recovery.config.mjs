// StrykerJS, one shard of the judging path (issue 21): the recovery phase
// (invariant 5's "after the faults stop"), the counterexample minimiser,
// and the checks that judge a user's retry client. Run with
//   npx stryker run stryker.recovery.config.mjs --concurrency 1
// Figures and the survivors it leaves: docs/mutation.md, "Shard: recovery,
// minimiser, client checks".
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  plugins: ['@stryker-mutator/vitest-runner'],
  // run.ts: only its client checks (clientCheckViolations, lines 182-190,
  // and the four checks, 212-281); the rest of the file is plumbing
  // (kernel, network, bridge) and the attempt records handed to the
  // service's invariants, whose unread fields (title, transport reason)
  // would only add equivalent mutants. replay.ts (replay divergence) stays
  // in stryker.config.mjs, whose scenario and canary suites kill its mutants.
  mutate: ['src/scenario/recovery.ts', 'src/campaign/minimise.ts', 'src/client/run.ts:182-190', 'src/client/run.ts:212-281'],
  vitest: {
    // Only the fast suites that drive these files in this process (see the
    // config for which and why); `related` would pull in nearly every suite.
    configFile: 'vitest.stryker.recovery.config.ts',
    related: false,
  },
  // Each mutant runs only the tests that executed its code in the dry run.
  coverageAnalysis: 'perTest',
  // The machine has 2 cores shared with other work.
  concurrency: 1,
  timeoutMS: 60_000,
  timeoutFactor: 2,
  // Re-runs only mutants whose code or covering tests changed since the
  // last run (the file is kept out of git, under reports/).
  incremental: true,
  incrementalFile: 'reports/stryker-incremental-recovery.json',
  reporters: ['clear-text', 'progress', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation-recovery/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation-recovery/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp-recovery',
  cleanTempDir: true,
};
