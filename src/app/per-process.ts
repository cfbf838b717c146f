import { createRequire, register } from 'node:module';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { asHost } from '../sim/seeded-node-crypto.js';
import { loadingUserModule } from './no-listen.js';

/**
 * The environment variable that makes every simulated process of a hosted
 * app load the app's module — and every module it imports, the user's own
 * files and its libraries alike — afresh, as a separate Node process does.
 * Without it the module is loaded once, and whatever it keeps at module
 * level (a Map of keys, a library's default in-memory store) is shared by
 * every simulated instance and outlives every simulated restart.
 */
export const PER_PROCESS_ENV = 'RETRYSIM_APP_PER_PROCESS';

/** Whether the environment asks for one module load per simulated process. */
export function perProcessFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[PER_PROCESS_ENV] === '1';
}

/**
 * What the environment says when it says something: `1` true, `0` false,
 * unset or empty undefined (then a scenario file's `service.moduleLoads`
 * decides how `replay` loads the app).
 */
export function perProcessOverride(env: NodeJS.ProcessEnv = process.env): boolean | undefined {
  const v = env[PER_PROCESS_ENV];
  return v === '1' ? true : v === '0' ? false : undefined;
}

/** The query that marks one simulated process's copy of a module. */
const PARAM = 'retrysim-process';

/** retrysim's own code, which every process shares (one kernel, one store); `/fixtures/` under it are user modules of the tests. */
const OWN = ['src/', 'dist/', 'bin/'].map((d) => new URL(`../../${d}`, import.meta.url).href);

/**
 * A resolve hook (Node's module.register, run on the loader thread): a
 * module imported by a module of process N is process N's copy too, so the
 * whole graph below the app's file is loaded once per process. Written as a
 * data: URL so the published package needs no extra file next to it.
 */
const HOOKS = `
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
const CJS = '${PARAM}-cjs';
let own = [];
const names = new Map();
export async function initialize(data) { own = data.own; }
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  const parent = context.parentURL;
  if (parent === undefined || !r.url.startsWith('file:')) return r;
  const m = /[?&](${PARAM}=\\d+)/.exec(parent);
  if (m === null || /[?&]${PARAM}=/.test(r.url)) return r;
  const path = r.url.split('?')[0];
  if (own.some((o) => path.startsWith(o)) && !path.includes('/fixtures/')) return r;
  const url = r.url + (r.url.includes('?') ? '&' : '?') + m[1];
  return commonJs(r) ? { ...r, url: url + '&' + CJS, format: 'module' } : { ...r, url };
}
// The format another hook (tsx) may leave unsaid: .cjs, or .js outside a "type": "module" package.
function commonJs(r) {
  if (r.format === 'commonjs') return true;
  if (r.format !== undefined && r.format !== null) return false;
  const file = fileURLToPath(r.url.split('?')[0]);
  if (file.endsWith('.cjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) { try { return JSON.parse(readFileSync(pkg, 'utf8')).type !== 'module'; } catch { return true; } }
    if (dirname(dir) === dir) return true;
  }
}
export async function load(url, context, next) {
  if (!url.includes(CJS)) return next(url, context);
  // A CommonJS module of one process: loaded by Node's own require (its
  // require.cache is emptied for each process, src/app/per-process.ts),
  // behind a small ES module that re-exports it. Node's ESM route for
  // CommonJS keeps the first load's module objects and gives {} the second
  // time. The export names are read once per file by requiring it here.
  const file = fileURLToPath(url.split('?')[0]);
  let keys = names.get(file);
  if (keys === undefined) {
    try { const x = createRequire(file)(file); keys = (typeof x === 'object' || typeof x === 'function') && x !== null ? Object.keys(x).filter((k) => k !== 'default') : []; } catch { keys = []; }
    names.set(file, keys);
  }
  const lines = ['import { createRequire } from "node:module";', 'const m = createRequire(' + JSON.stringify(file) + ')(' + JSON.stringify(file) + ');', 'export default m;'];
  keys.forEach((k, i) => lines.push('const v' + i + ' = m[' + JSON.stringify(k) + ']; export { v' + i + ' as ' + JSON.stringify(k) + ' };'));
  return { format: 'module', source: lines.join('\\n'), shortCircuit: true };
}`;

let hooked = false;
let loads = 0;
const require = createRequire(import.meta.url);
/**
 * require.cache as it was when retrysim loaded: its own CommonJS
 * dependencies, kept. Taken here, not when retrysim first loads a user
 * module: under vitest the test file imports the app next to
 * retrysim/vitest, so the app's libraries (Fastify, from node_modules) are
 * in the cache by then, and counted as retrysim's they stayed cached while
 * tsx's require loaded others of their files afresh — a Fastify of two
 * copies, whose app() failed in every per-process load (until 2026-12;
 * src/app/cjs-libraries-per-process.test.ts).
 */
const baseline: ReadonlySet<string> = new Set(Object.keys(require.cache));
let tsxEsm: { import: (specifier: string, parent: string) => Promise<unknown> } | undefined;

/**
 * Kept across processes: a native addon (Node cannot load one twice), and
 * JSON data (mime-db and its like: read-only tables, parsed once instead of
 * once per process).
 */
const SHARED_EXT = new Set(['.node', '.json']);

/**
 * Drops the CommonJS modules user code loaded (a library's `require`d
 * files), so the next process's `require` evaluates them again.
 */
function forgetUserCjs(): void {
  for (const k of Object.keys(require.cache)) if (!baseline.has(k) && !SHARED_EXT.has(extname(k))) delete require.cache[k];
}

/**
 * Loads a fresh copy of a user's module and of everything it imports (one
 * simulated process's). Costs a module evaluation per call, and Node never
 * unloads an ES module: memory grows with every process, which is why this
 * is opt-in and used on samples (see docs/idempotency-libraries.md).
 */
export function importFresh(path: string, commonJsTs: boolean): Promise<Record<string, unknown>> {
  // Its top level's listen() binds nothing, as in a once-loaded module (src/app/no-listen.ts).
  return loadingUserModule(() => importFreshCopy(path, commonJsTs));
}

async function importFreshCopy(path: string, commonJsTs: boolean): Promise<Record<string, unknown>> {
  if (!hooked) {
    register(`data:text/javascript,${encodeURIComponent(HOOKS)}`, { data: { own: OWN } });
    hooked = true;
  }
  forgetUserCjs();
  const abs = resolve(path);
  const n = ++loads;
  const ext = extname(abs);
  if (commonJsTs) {
    const { require: tsxRequire } = await import('tsx/cjs/api');
    return { default: tsxRequire(abs, import.meta.url) as unknown };
  }
  if (ext === '.cjs' || (ext === '.js' && !moduleTyped(abs))) return { default: require(abs) as unknown };
  const url = `${pathToFileURL(abs).href}?${PARAM}=${n}`;
  if (['.ts', '.mts', '.tsx'].includes(ext)) {
    // One tsx namespace for every load: tsImport would register a hook per call.
    if (tsxEsm === undefined) {
      const { register: tsxRegister } = await import('tsx/esm/api');
      // Host code, even inside a run: tsx mints its loader's id with node:crypto's randomUUID (asHost).
      tsxEsm = asHost(() => tsxRegister({ namespace: 'retrysim-per-process' })) as unknown as typeof tsxEsm;
    }
    return (await tsxEsm!.import(url, import.meta.url)) as Record<string, unknown>;
  }
  return (await import(url)) as Record<string, unknown>;
}

/** Whether the nearest package.json says `"type": "module"` (a `.js` file is then an ES module). */
function moduleTyped(abs: string): boolean {
  for (let dir = dirname(abs); ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readFileSync(pkg, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (dirname(dir) === dir) return false;
  }
}
