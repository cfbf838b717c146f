/**
 * `npm run bench`: runs every bench/*.bench.ts (or only those named on the
 * command line, e.g. `npm run bench -- kernel`) in a fixed order. Each prints
 * one JSON line per figure on stdout. Speed is measured here, never asserted
 * in tests.
 */
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();
if (files.length === 0) {
  console.error(`bench: nothing matches ${only.join(' ')}`);
  process.exit(2);
}
for (const f of files) {
  const mod = (await import(pathToFileURL(join(here, f)).href)) as { default: () => Promise<void> };
  await mod.default();
}
