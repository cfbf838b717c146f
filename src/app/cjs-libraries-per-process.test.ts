// The per-process module probe under the vitest helper, when the app's
// CommonJS libraries were loaded before retrysim first loaded the app: a
// user's test file imports the app (and so Fastify, from node_modules)
// next to retrysim/vitest. retrysim noted "its own" CommonJS modules only
// when it first loaded a user module, so those libraries counted as
// retrysim's and stayed cached, and a .ts app in a "type": "commonjs"
// project (npm init's default) loaded afresh through
// tsx's require got Fastify's files partly fresh and partly cached: every
// app() failed with "Cannot read properties of undefined (reading
// 'started')" (Fastify's state symbol of another copy), and the property
// of a correct app failed (until 2026-12; check --app held).
import { expect, it } from 'vitest';
import { fc, replayable, runServiceCase, serviceCases } from '../vitest.js';
import { appService } from './define.js';
import { tempDirs } from '../testing/temp-dirs.js';
import type { AppDescriptor } from './descriptor.js';
// TypeScript types a CommonJS module's default import as its whole namespace; vitest hands the default export.
import fixture from './fixtures/commonjs-project/fastify-plugin-app.js';
const descriptor = fixture as unknown as AppDescriptor;

const tmp = tempDirs();

it('a correct Fastify app in a CommonJS project ("type": "commonjs") passes the vitest property, its per-process probe included', async () => {
  const module = new URL('./fixtures/commonjs-project/fastify-plugin-app.ts', import.meta.url);
  const service = appService(descriptor);
  const prop = fc.asyncProperty(serviceCases(service, { module, faults: ['instances', 'kill', 'loseResponse', 'concurrency'] }), async (c) => (await runServiceCase(service, c)).violations.length === 0);
  await expect(fc.assert(prop, { ...replayable(service, { module, foundDir: tmp('rs-cjs-libs-') }), numRuns: 10, seed: 1 })).resolves.toBeUndefined();
}, 120_000);
