#!/usr/bin/env node
// Entry point: registers the tsx loader so the TypeScript sources run as they
// are (no build step after `npm ci`), then hands over to the CLI.
import { register } from 'tsx/esm/api';

// `retrysim ... | head` closes stdout early; that is not an error.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});
register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
