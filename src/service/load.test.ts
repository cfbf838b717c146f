import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../testing/temp-dirs.js';
import { loadService } from './load.js';
import { markApp } from './errors.js';
import { loadClient } from '../client/load.js';
import { runCli } from '../real/child.js';

const tmp = tempDirs();
const root = join(import.meta.dirname, '..', '..');

describe('user modules in an ordinary project', () => {
  it('a .ts service and a .ts client load from a folder whose package.json has no "type": "module" (npm init\'s default)', async () => {
    const d = tmp('rs-cjs-');
    writeFileSync(join(d, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0' }));
    copyFileSync(join(root, 'examples', 'payments-atomic', 'service.ts'), join(d, 'service.ts'));
    copyFileSync(join(root, 'examples', 'fetch-retry-client', 'client.ts'), join(d, 'client.ts'));
    expect((await loadService(join(d, 'service.ts'))).name).toBe('payments-atomic');
    // The default export, not "2 clients and no default".
    expect((await loadClient(join(d, 'client.ts'))).name).toBe('fetch-retry-client');
    expect((await loadClient(join(d, 'client.ts'), 'fetch-retry-client-fixed')).name).toBe('fetch-retry-client-fixed');
  });
});

describe('which export is the service', () => {
  it('the default export; without one, the named export service; other named exports are not read (the docs say so: README, check --service --help)', async () => {
    const d = tmp('rs-named-');
    const source = readFileSync(join(root, 'examples', 'payments-atomic', 'service.ts'), 'utf8');
    writeFileSync(join(d, 'named.ts'), source.replace(/^export default service;$/m, 'export { service };'));
    expect((await loadService(join(d, 'named.ts'))).name).toBe('payments-atomic');
    // Only the default export counts when there is one, and no other name is read.
    writeFileSync(join(d, 'both.ts'), source.replace(/^export default service;$/m, "export default { ...service, name: 'the-default' };\nexport { service };"));
    expect((await loadService(join(d, 'both.ts'))).name).toBe('the-default');
    writeFileSync(join(d, 'other.ts'), source.replace(/^export default service;$/m, 'export { service as canary };'));
    // The line names what the module does export: one rename away (it said only "no default export").
    expect(await loadService(join(d, 'other.ts')).then(() => 'loaded', (e: Error) => e.message)).toMatch(/has no default export and no export named 'service' \(.*\); it exports: 'canary'$/);
  });
});

describe('a bad user module ends in one clear line, with no source text', () => {
  /** A message quotes no code: one line, short, no data: URL, no tsx namespace query. */
  function clean(m: string): void {
    expect(m.split('\n')).toHaveLength(1);
    expect(m.length).toBeLessThan(400);
    expect(m).not.toMatch(/data:text|namespace=|__defProp|require\(/);
  }

  it.each([
    ['a CommonJS project (no "type": "module")', { name: 'shop', version: '1.0.0' }],
    ['an ES module project', { name: 'shop', version: '1.0.0', type: 'module' }],
  ])('a module that throws at load, in %s: the exception and its line, nothing of the compiled module', async (_what, pkg) => {
    const d = tmp('rs-throw-');
    writeFileSync(join(d, 'package.json'), JSON.stringify(pkg));
    writeFileSync(join(d, 'service.ts'), "import { join } from 'node:path';\nconst where: string = join('a', 'b');\nthrow new Error(`no config at ${where}`);\nexport default {};\n");
    const m = await loadService(join(d, 'service.ts')).then(() => 'loaded', (e: Error) => e.message);
    expect(m).toMatch(new RegExp(`^service '.*service\\.ts': cannot load: Error: no config at a/b \\(at ${d.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/service\\.ts:\\d+:\\d+\\)$`)); // (the CLI maps the line to the source; vitest's own stack handling may not)
    clean(m);
  });

  it('a syntax error: SyntaxError, what and where, in one line', async () => {
    const d = tmp('rs-syntax-');
    writeFileSync(join(d, 'service.ts'), 'const x = 1;\nexport default {\n  name: "x",\n');
    const m = await loadService(join(d, 'service.ts')).then(() => 'loaded', (e: Error) => e.message);
    expect(m).toMatch(/cannot load: SyntaxError: Expected identifier but found end of file \(at .*service\.ts:4:0\)$/);
    clean(m);
  });

  it.each(['service.mjs', 'service.js', 'service.cjs'])('a syntax error in a JavaScript file (%s): where too, though Node\'s own error names no file', async (file) => {
    const d = tmp('rs-syntax-js-');
    writeFileSync(join(d, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0', type: 'module' }));
    writeFileSync(join(d, file), 'const a = 1;\nconst b = {;\nexport default { a, b };\n');
    // Through the CLI: under vitest, vite's import analysis reports the file instead of Node.
    const r = await runCli(['check', '--service', join(d, file), '--runs', '3', '--found', tmp('rs-found-')]);
    expect(r.code).toBe(2);
    const m = r.stderr.trim();
    expect(m).toMatch(new RegExp(`cannot load: SyntaxError: Unexpected token ';' \\(at ${join(d, file).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2\\)$`));
    clean(m);
  });

  it.each([['service', 'export default {};\n'], ['client', "import { x } from './x.js';\nexport default x;\n"]])('an ES module %s written as .js in a package whose "type" is "commonjs" (npm init\'s): Node\'s "Unexpected token" plus why and what to do', async (kind, text) => {
    const d = tmp('rs-esm-js-');
    // What npm 11's `npm init -y` writes: Node then reads every .js file as CommonJS (without a "type" it detects ES module syntax).
    writeFileSync(join(d, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0', type: 'commonjs' }));
    writeFileSync(join(d, `${kind}.js`), text);
    const r = await runCli(['check', `--${kind}`, join(d, `${kind}.js`), '--runs', '3', '--found', tmp('rs-found-')]);
    expect(r.code).toBe(2);
    const line = r.stderr.trim().split('\n').at(-1)!;
    expect(line).toMatch(/cannot load: SyntaxError: (Unexpected token 'export'|Cannot use import statement outside a module)/);
    expect(line).toContain(`; Node reads a .js file as CommonJS unless its package.json says "type": "module" (${join(d, 'package.json')} says "type": "commonjs"): rename it .mjs, or set "type": "module"`);
  });

  it('a .ts service with a top-level await in a package without "type": "module": tsx compiles it to CommonJS, and the line says why and what to do', async () => {
    const d = tmp('rs-tla-');
    writeFileSync(join(d, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0' }));
    writeFileSync(join(d, 'service.ts'), 'const lease = await Promise.resolve(30_000);\nexport default { lease };\n');
    const r = await runCli(['check', '--service', join(d, 'service.ts'), '--runs', '3', '--found', tmp('rs-found-')]);
    expect(r.code).toBe(2);
    const line = r.stderr.trim();
    clean(line);
    expect(line).toContain(`Top-level await is currently not supported with the "cjs" output format`);
    expect(line).toContain(`; a .ts file is loaded as CommonJS unless its package.json says "type": "module" (${join(d, 'package.json')} has no "type"): rename it .mts, or set "type": "module"`);
  });

  it('no default export: says so, and what to export', async () => {
    const d = tmp('rs-nodefault-');
    writeFileSync(join(d, 'service.ts'), 'export const handler = () => 1;\n');
    const m = await loadService(join(d, 'service.ts')).then(() => 'loaded', (e: Error) => e.message);
    expect(m).toMatch(/cannot load: the module has no default export and no export named 'service' \(export default \{ name, tables, setup, steps, handle, operation, effects \}\)(; it exports: .*)?$/);
    clean(m);
  });

  it('no default export in a module named by --app: the shape shown is an app descriptor\'s', async () => {
    const d = tmp('rs-nodefault-app-');
    writeFileSync(join(d, 'app.mjs'), 'export const build = () => (req, res) => res.end();\n');
    const r = await runCli(['check', '--app', join(d, 'app.mjs'), '--runs', '3', '--found', tmp('rs-found-')]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^retrysim check: app '.*app\.mjs': cannot load: the module has no default export and no export named 'service' \(export default \{ name, app, operation, effects \}\)(; it exports: .*)?$/);
  });

  it('named with --app: a descriptor without app() is said in a descriptor\'s words, not "tables: missing"', async () => {
    const d = tmp('rs-noapp-');
    const file = join(d, 'app.mjs');
    writeFileSync(file, "export default { name: 'shop', App: () => (q, s) => s.end(), operation: { path: '/orders', body: () => '{}' }, effects: { of: () => [] } };\n");
    markApp(file);
    const m = await loadService(file).then(() => 'loaded', (e: Error) => e.message);
    // Until 2026-12: "service 'shop': …: tables: missing (expected array)", a ServiceDefinition's field.
    expect(m).toBe(`app '${file}': the default export has no app; an app descriptor is export default { name, app, operation, effects }, app({ redis }) returning a (req, res) listener`);
    clean(m);
    const none = join(d, 'none.mjs');
    writeFileSync(none, 'export const x = 1;\n');
    markApp(none);
    expect(await loadService(none).then(() => 'loaded', (e: Error) => e.message)).toMatch(/no default export and no export named 'service' \(export default \{ name, app, operation, effects \}\); it exports: 'x'$/);
  });

  it('a default export that is a Promise (an async build called, not awaited) is named as one: app, service and client', async () => {
    const d = tmp('rs-promise-');
    const app = join(d, 'app.mjs');
    writeFileSync(app, "const build = async () => ({ name: 'shop', app: () => (q, s) => s.end(), operation: { path: '/orders', body: () => '{}' }, effects: { of: () => [] } });\nexport default build();\n");
    markApp(app);
    // Until 2026-12: "the default export has no app", of an object whose app was one await away.
    expect(await loadService(app).then(() => 'loaded', (e: Error) => e.message)).toBe(`app '${app}': the default export is a Promise (an async function's result): export the descriptor itself, awaiting what it needs at the module's top level (top-level await) or inside app()`);
    const service = join(d, 'service.mjs');
    writeFileSync(service, 'export default Promise.resolve({});\n');
    expect(await loadService(service).then(() => 'loaded', (e: Error) => e.message)).toMatch(/the default export is a Promise \(an async function's result\): export the definition itself/);
    const client = join(d, 'client.mjs');
    writeFileSync(client, "export default (async () => ({ name: 'c', deadlineMs: 1000, run: async () => ({}) }))();\n");
    // Until 2026-12: "exports no retry client".
    expect(await loadClient(client).then(() => 'loaded', (e: Error) => e.message)).toMatch(/its default export is a Promise \(an async function's result\): export the client itself/);
  });

  it('`export * from` another .ts file, in a CommonJS project, loads and runs', async () => {
    const d = tmp('rs-reexport-');
    writeFileSync(join(d, 'package.json'), JSON.stringify({ name: 'shop', version: '1.0.0' }));
    copyFileSync(join(root, 'examples', 'payments-atomic', 'service.ts'), join(d, 'impl.ts'));
    writeFileSync(join(d, 'helpers.ts'), 'export const currency = "EUR";\n');
    writeFileSync(join(d, 'service.ts'), "export * from './helpers.ts';\nimport impl from './impl.ts';\nexport default impl;\n");
    expect((await loadService(join(d, 'service.ts'))).name).toBe('payments-atomic');
    // Under plain node (the CLI), not only under vitest's loader: this is where `?namespace=` broke it.
    const r = await runCli(['check', '--service', join(d, 'service.ts'), '--runs', '3', '--found', tmp('rs-found-')]);
    expect(r.stderr).not.toMatch(/cannot load/);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);
});
