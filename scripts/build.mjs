// `npm run build` (also run by `npm pack` through prepack): the library and
// the CLI as plain JavaScript with .d.ts files in dist/, so the published
// package runs on Node with no TypeScript tooling. A checkout does not need
// it: bin/retrysim.js runs the sources directly.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
copyFileSync('src/cli/check-worker-entry.mjs', 'dist/cli/check-worker-entry.mjs');
// The HTML pages bundle their browser code with esbuild when they are made;
// it imports the engine's compiled .js files next to it in dist/.
cpSync('src/report/html/client', 'dist/report/html/client', { recursive: true });
