import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ServiceDefinition } from './definition.js';
import { describeThrow, isAppName, ServiceError } from './errors.js';
import { registerService } from './registry.js';
import { validateDefinition } from './validate.js';
import { appService } from '../app/define.js';
import { isAppDescriptor, type AppDescriptor } from '../app/descriptor.js';
import { loadingAt } from '../sim/load-clock.js';
import { asHost } from '../sim/seeded-node-crypto.js';
import { loadingUserModule } from '../app/no-listen.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { importFresh, perProcessFromEnv } from '../app/per-process.js';
import { awaitAsyncSetup } from './async-setup.js';
import { isThenable } from '../sim/thenable.js';
import { compiledTs, failedInCache } from './ts-cache.js';

const TS = new Set(['.ts', '.mts', '.cts', '.tsx']);

/**
 * Imports a user's module by path: TypeScript through tsx's ESM API (no
 * build step), JavaScript with a plain import. Rejects with one sentence:
 * no such file, or what the module threw while loading (and where).
 */
export async function importUserModule(path: string): Promise<Record<string, unknown>> {
  const abs = resolve(path);
  if (!existsSync(abs)) throw new Error(`no such file ${abs}`);
  // A folder: Node's "Directory import … is not supported" named retrysim's own files; the module is a file in it.
  if (statSync(abs).isDirectory()) {
    const files = readdirSync(abs).filter((f) => /\.(m|c)?[jt]sx?$/.test(f) && !/\.(test|spec|d)\./.test(f)).sort();
    throw new Error(`${abs} is a folder, not a module: name the module file in it${files.length > 0 ? ` (${files.slice(0, 6).map((f) => join(path, f)).join(', ')}${files.length > 6 ? ', …' : ''})` : ''}`);
  }
  const url = pathToFileURL(abs).href;
  try {
    // Its top level's listen() binds nothing: retrysim delivers the requests (src/app/no-listen.ts).
    return await loadingUserModule(() => importModule(abs, url));
  } catch (e) {
    const text = describeThrow(e);
    // Node's SyntaxError from loading an ES module carries no file or line (it prints them only for an uncaught one);
    // `node --check` on the file says where. A syntax error in a file it imports stays as it was: --check reads one file.
    const where = e instanceof SyntaxError && !text.includes('(at ') && !TS.has(extname(abs)) ? `${text}${syntaxErrorAt(abs)}` : text;
    throw new Error(`${where}${esmInCommonJs(e, abs)}`);
  }
}

/**
 * Why a `.js` file written as an ES module (`export default …`, `import …`)
 * did not parse, when that is the reason: Node reads a `.js` file as
 * CommonJS unless its nearest package.json says `"type": "module"` (npm's
 * default does not). Its own SyntaxError says only "Unexpected token
 * 'export'". '' otherwise.
 */
function esmInCommonJs(e: unknown, abs: string): string {
  const message = e instanceof Error ? e.message : '';
  const js = e instanceof SyntaxError && extname(abs) === '.js' && /Unexpected token 'export'|Cannot use import statement outside a module/.test(message);
  // A .ts file there is compiled to CommonJS (commonJsTs), where a top-level await cannot be.
  const ts = extname(abs) === '.ts' && /Top-level await is currently not supported with the "cjs" output format/.test(message);
  if (!js && !ts) return '';
  const { pkg, type } = packageTypeOf(abs);
  // npm init writes "type": "commonjs" (npm 11): then Node does not even try the file as an ES module.
  const says = pkg === undefined ? 'there is none' : type === undefined ? `${pkg} has no "type"` : `${pkg} says "type": ${JSON.stringify(type)}`;
  return ts
    ? `; a .ts file is loaded as CommonJS unless its package.json says "type": "module" (${says}): rename it .mts, or set "type": "module"`
    : `; Node reads a .js file as CommonJS unless its package.json says "type": "module" (${says}): rename it .mjs, or set "type": "module"`;
}

/**
 * The package.json nearest to `abs`, going up (undefined: none), and its
 * `type` field — what decides how Node reads a `.js` file and tsx a `.ts`
 * one. `unreadable` when it is not JSON.
 */
function packageTypeOf(abs: string): { pkg?: string; type?: unknown; unreadable?: true } {
  for (let dir = dirname(abs); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        return { pkg, type: (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type };
      } catch {
        return { pkg, unreadable: true };
      }
    }
    if (dirname(dir) === dir) return {};
  }
}

/** Imports the module at `abs` (`url`) by its kind: see {@link importUserModule}. */
async function importModule(abs: string, url: string): Promise<Record<string, unknown>> {
  if (TS.has(extname(abs)) && commonJsTs(abs)) {
    // A .ts file npm's default (no "type": "module") makes CommonJS: load it
    // through tsx's require, so its own imports (`export * from './x.ts'`)
    // resolve as CommonJS too. Through the ESM loader, Node's scan of a
    // CommonJS module's re-exports reads `x.ts?namespace=…` and fails.
    const { require: tsxRequire } = await import('tsx/cjs/api');
    return unwrapCommonJs({ default: tsxRequire(abs, import.meta.url) as unknown });
  }
  if (TS.has(extname(abs))) {
    // Compiled once into a cache and imported natively: no loader thread (src/service/ts-cache.ts).
    // Not where something else formats stacks (vitest's Error.prepareStackTrace): Node's source maps
    // apply only under its own, and tsx brings its own mapping there.
    const out = nodeFormatsStacks() ? await asHost(() => compiledTs(abs, commonJsTs)) : undefined;
    if (out !== undefined) {
      // Stacks then name the .ts file and line (describeThrow's "(at …)"), as under tsx.
      process.setSourceMapsEnabled(true);
      try {
        return unwrapCommonJs((await import(pathToFileURL(out).href)) as Record<string, unknown>);
      } catch (e) {
        if (!failedInCache(e)) throw e;
      }
    }
    const { tsImport } = await import('tsx/esm/api');
    // Host code: tsx registers its loader with an id from node:crypto's randomUUID, which is not the module's to draw.
    return unwrapCommonJs((await asHost(() => tsImport(url, import.meta.url))) as Record<string, unknown>);
  }
  return unwrapCommonJs((await import(url)) as Record<string, unknown>);
}

/**
 * Whether Node formats error stacks itself — `Error.prepareStackTrace` unset
 * (older Node) or Node's own `ErrorPrepareStackTrace` — and so applies
 * source maps to them.
 */
function nodeFormatsStacks(): boolean {
  const f = Error.prepareStackTrace as ((...a: never[]) => unknown) | undefined;
  return f === undefined || f.name === 'ErrorPrepareStackTrace';
}

/** ` (at FILE:LINE)` for a JavaScript file with a syntax error, from `node --check`; '' when it finds none. */
function syntaxErrorAt(abs: string): string {
  const r = spawnSync(process.execPath, ['--check', abs], { encoding: 'utf8', timeout: 10_000 });
  const at = r.status !== 0 ? new RegExp(`^${abs.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+)$`, 'm').exec(r.stderr)?.[1] : undefined;
  return at === undefined ? '' : ` (at ${abs}:${at})`;
}

/** A `.ts`/`.cts` file Node would treat as CommonJS: `.cts`, or `.ts` whose nearest package.json has no `"type": "module"`. */
export function commonJsTs(abs: string): boolean {
  const ext = extname(abs);
  if (ext === '.cts') return true;
  if (ext !== '.ts' && ext !== '.tsx') return false;
  const p = packageTypeOf(abs);
  // Unreadable: let the ESM loader decide, as before; no package.json anywhere: Node's default is CommonJS.
  return p.unreadable !== true && p.type !== 'module';
}

/**
 * A `.ts` file in a folder whose package.json lacks `"type": "module"` (npm's
 * default) is compiled to CommonJS, and importing it gives a namespace whose
 * `default` is the whole `module.exports` (marked `__esModule`): the user's
 * own `export default` then sits one level down. Lift the exports up.
 */
export function unwrapCommonJs(ns: Record<string, unknown>): Record<string, unknown> {
  const d = ns.default;
  if (typeof d === 'object' && d !== null && '__esModule' in d) return { ...(d as Record<string, unknown>) };
  return ns;
}

/** Options of {@link loadService}. */
export interface LoadOptions {
  /**
   * The clock the module's top level reads while it loads: `simulated`
   * (default) the simulation's epoch, the instant its runs start at;
   * `real` the machine's, for a process that serves it for real (`serve`,
   * and `flaky`, whose real lanes run it in process).
   */
  clock?: 'simulated' | 'real';
  /**
   * A hosted app only: load a new copy of the app's module graph for each
   * simulated process (src/app/per-process.ts); default: the
   * RETRYSIM_APP_PER_PROCESS environment variable is `1`.
   */
  perProcess?: boolean;
}

/**
 * Loads a user's service module (TypeScript through tsx's ESM API, no build
 * step; JavaScript with a plain import), checks its default export (or a
 * named `service` export) is a {@link ServiceDefinition}, and files it under
 * its path so scenarios that name the module find it. While it loads, its
 * `Date` reads the simulation's epoch (2026-01-01), the instant every run
 * starts at: a module loads once per process, however many runs follow. Every problem is a
 * {@link ServiceError} with one clear sentence.
 */
export async function loadService(path: string, o: LoadOptions = {}): Promise<ServiceDefinition> {
  let mod: Record<string, unknown>;
  try {
    // In simulation its top level reads the instant every run starts at, not the machine's clock (src/sim/load-clock.ts).
    mod = o.clock === 'real' ? await importUserModule(path) : await loadingAt(SIM_EPOCH_MS, () => importUserModule(path));
  } catch (e) {
    throw new ServiceError(path, `cannot load: ${(e as Error).message}`);
  }
  const value = mod.default ?? mod.service;
  // Named with --app, the module is an app descriptor: a problem with it is said in a descriptor's
  // fields, not a ServiceDefinition's ("tables: missing" for a descriptor without `app` sent users the wrong way).
  const asApp = isAppName(path);
  const shape = asApp ? '{ name, app, operation, effects }' : '{ name, tables, setup, steps, handle, operation, effects }';
  if (value === undefined) {
    // What it does export, so a service exported under its own name (`export const orders = …`) is one rename away.
    const names = Object.keys(mod).filter((k) => k !== 'default' && k !== '__esModule');
    throw new ServiceError(path, `cannot load: the module has no default export and no export named 'service' (export default ${shape})${names.length > 0 ? `; it exports: ${names.map((n) => `'${n}'`).join(', ')}` : ''}`);
  }
  // `export default build()` of an async build: a Promise, whose fields are all missing.
  if (isThenable(value)) {
    throw new ServiceError(path, `the default export is a Promise (an async function's result): export the ${asApp ? 'descriptor' : 'definition'} itself, awaiting what it needs at the module's top level (top-level await)${asApp ? ' or inside app()' : ''}`);
  }
  if (asApp && !isAppDescriptor(value)) {
    const app = typeof value === 'object' && value !== null ? (value as { app?: unknown }).app : undefined;
    const why = typeof value !== 'object' || value === null ? `is ${value === null ? 'null' : typeof value}` : app === undefined ? 'has no app' : typeof app !== 'function' ? `has an app that is not a function (${typeof app})` : 'also has handle (a ServiceDefinition: pass it with --service)';
    throw new ServiceError(path, `the default export ${why}; an app descriptor is export default ${shape}, app({ redis }) returning a (req, res) listener`);
  }
  // An unmodified Node HTTP app (a listener factory plus its descriptor) runs through the same path (src/app/).
  // With one load per simulated process, each process builds its app from its own copy of the module graph.
  const fresh = isAppDescriptor(value) && (o.perProcess ?? perProcessFromEnv()) ? () => freshDescriptor(path) : undefined;
  const def = validateDefinition(isAppDescriptor(value) ? appService(value, fresh) : value, path);
  // An `async setup` is awaited here, once, under the same clock as the module's top level.
  await awaitAsyncSetup(def, o.clock === 'real' ? undefined : (f) => loadingAt(SIM_EPOCH_MS, f));
  registerService(path, def);
  return def;
}

/** One simulated process's copy of an app module's descriptor (see {@link importFresh}). */
async function freshDescriptor(path: string): Promise<AppDescriptor> {
  const abs = resolve(path);
  const mod = unwrapCommonJs(await importFresh(abs, commonJsTs(abs)));
  const value = mod.default ?? mod.service;
  if (!isAppDescriptor(value)) throw new Error(`a fresh load of ${abs} gave no app descriptor`);
  return value;
}
