#!/usr/bin/env node
// Entry point: registers the tsx loader so the TypeScript sources run as they
// are (no build step after `npm ci`), then hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
