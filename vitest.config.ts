import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'properties/**/*.test.ts'],
    // Property suites and SQLite-backed scenarios are CPU-bound; two forks
    // match the two cores of the CI machine.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
