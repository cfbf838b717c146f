// `npm run build` (also run by `npm pack` through prepack): the library and
// the CLI as plain JavaScript with .d.ts files in dist/, so the published
// package runs on Node with no TypeScript tooling. A checkout does not need
// it: bin/retrysim.js runs the sources directly.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
rmSync('dist', { recursive: true, force: true });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
copyFileSync('src/cli/check-worker-entry.mjs', 'dist/cli/check-worker-entry.mjs');
// The HTML pages bundle their browser code with esbuild when they are made;
// it imports the engine's compiled .js files next to it in dist/.
cpSync('src/report/html/client', 'dist/report/html/client', { recursive: true });

// Two dependencies are many small modules each — zod about a hundred ES
// modules, @sinonjs/fake-timers a CommonJS tree — which every `retrysim`
// command would resolve and compile at its start (a third of a replay's
// CPU; docs/benchmarks.md, "the CLI's start"). The published JavaScript
// imports one pre-bundled file of each instead (dist/vendor/), as the
// checkout's cached CLI bundle compiles them in. Only these two are
// rewritten, so dist's own modules stay one copy each (a user module that
// imports 'retrysim' shares them with the CLI), and zod stays a dependency
// for the .d.ts files.
const VENDORED = [
  { name: 'zod', file: 'zod.mjs', source: "export * from 'zod';" },
  { name: '@sinonjs/fake-timers', file: 'fake-timers.mjs', source: "export { default } from '@sinonjs/fake-timers';" },
];
const esbuild = await import('esbuild');
for (const v of VENDORED) {
  await esbuild.build({
    stdin: { contents: v.source, resolveDir: process.cwd(), loader: 'js' },
    bundle: true, format: 'esm', platform: 'node', target: 'node20', outfile: join('dist', 'vendor', v.file), logLevel: 'error',
    // CommonJS inside (@sinonjs/commons) calls require() for Node's own modules.
    banner: { js: "import { createRequire as __retrysimRequire } from 'node:module'; const require = __retrysimRequire(import.meta.url);" },
  });
}
const importOf = new RegExp(`(from\\s+|import\\s*\\(\\s*)(['"])(${VENDORED.map((v) => v.name.replace(/[/.]/g, '\\$&')).join('|')})\\2`, 'g');
for (const f of readdirSync('dist', { recursive: true, encoding: 'utf8' })) {
  if (!f.endsWith('.js') || f.startsWith('vendor')) continue;
  const p = join('dist', f);
  const text = readFileSync(p, 'utf8');
  const out = text.replace(importOf, (_, head, q, name) => {
    let rel = relative(dirname(p), join('dist', 'vendor', VENDORED.find((v) => v.name === name).file)).replaceAll('\\', '/');
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return `${head}${q}${rel}${q}`;
  });
  if (out !== text) writeFileSync(p, out);
}
