// The examples' properties, run from this checkout:
//   npm run build && npx vitest run -c examples/vitest.config.ts examples/payments-atomic
// The tests import 'retrysim/vitest' as a project that installed the package
// does; in the checkout that name resolves to the package itself (its
// "exports" point at dist/, hence the build). The root config runs only
// src/ and properties/, so the examples need one of their own.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['examples/**/*.test.ts'],
    // A thousand runs plus shrinking on a loaded two-core machine outlast vitest's 5 s default.
    testTimeout: 120_000,
  },
});
