import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { defineConfig } from 'vitest/config';

/**
 * Two projects, one suite. A fresh fork per file, importing the sources
 * again, costs about 1.2 CPU-seconds a file on the two-core CI machine, so
 * files that cannot leave state behind share their forks (`isolate:
 * false`). A file gets a fresh process of its own when it touches
 * process-wide state a later file in the same fork would see: the CLI run
 * in-process (`runMain`: stand-ins of Math.random and timers, module copies
 * of a service), hosted apps and the idempotency libraries (fresh CommonJS
 * copies of express & co.; everything under src/app and src/kv), vitest's
 * own fake timers, mocks and stubs, the vitest helper's shrink limits (kept
 * per definition object), globals, listeners, the browser. The rule reads
 * each file's text, so a new test lands on the safe side by what it uses;
 * a file that failed only after others in a shared fork says `isolate: own
 * fork` in a comment, with why.
 */
const ISOLATE_WHEN = /isolate: own fork|express|fastify|@node-idempotency|powertools|examples\/app-|runMain|vi\.mock|vi\.useFakeTimers|vi\.stubGlobal|vi\.stubEnv|process\.chdir|process\.env\.\w+ *=|shrinkBudgetMs|module\.register|stand-in|retrysim\/vitest|\.\.\/vitest\.js|playwright|chromium|configureGlobal|process\.on\(|globalThis\.\w+ *=[^=]|Math\.random *=|Date\.now *=/;
const ISOLATED_DIRS = ['src/app/', 'src/kv/'];

function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => relative(import.meta.dirname, join(dir, f)).replaceAll('\\', '/'));
}

const all = [...testFiles(join(import.meta.dirname, 'src')), ...testFiles(join(import.meta.dirname, 'properties'))];
const isolated = all.filter((f) => ISOLATED_DIRS.some((d) => f.startsWith(d)) || ISOLATE_WHEN.test(readFileSync(join(import.meta.dirname, f), 'utf8')));
const shared = all.filter((f) => !isolated.includes(f));

export default defineConfig({
  test: {
    // Property suites and SQLite-backed scenarios are CPU-bound; two forks
    // match the two cores of the CI machine.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: 'isolated', include: isolated, isolate: true } },
      { extends: true, test: { name: 'shared', include: shared, isolate: false } },
    ],
  },
});
