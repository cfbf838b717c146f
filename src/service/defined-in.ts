/**
 * Which file a user's service, app or retry client came from, when the
 * vitest helper was not told (`replayable(service)` with no `module`).
 *
 * The helper is handed objects, not paths, and a counterexample file must
 * name a module that `retrysim replay` can load: until 2026-12 a service's
 * file named its `name` ("module": "lru-orders") and the printed replay
 * line (`retrysim replay --service lru-orders …`) failed when pasted, while
 * a client's printed `<your client module>` — and in both cases the check
 * that the file replays in a fresh process was skipped without a word.
 *
 * V8 knows where each function was written: an inspector session on this
 * thread reads a function's `[[FunctionLocation]]` and the script's URL
 * (vitest runs a test's modules under their own file names). A function may
 * live elsewhere than the object exported (a factory in a library), so a
 * candidate counts only when loading it gives an export of the same name:
 * the check replay itself makes.
 */
import { Session } from 'node:inspector';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importUserModule, unwrapCommonJs } from './load.js';
import { loadingAt } from '../sim/load-clock.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { moduleKey } from './registry.js';

/** A global the inspector's evaluation reads the function from (deleted at once). */
const PROBE = '__retrysimDefinedInProbe';

/**
 * The files in which these functions were written, in the order given,
 * without repeats; retrysim's own files are left out. [] when the inspector
 * cannot be used here (a worker without one, a runtime without it).
 */
export function filesDefining(fns: readonly unknown[]): string[] {
  const wanted = fns.filter((f): f is (...a: unknown[]) => unknown => typeof f === 'function');
  if (wanted.length === 0) return [];
  const session = new Session();
  try {
    session.connect();
  } catch {
    return [];
  }
  const urls = new Map<string, string>();
  const found: string[] = [];
  const g = globalThis as Record<string, unknown>;
  try {
    session.on('Debugger.scriptParsed', (m) => urls.set(m.params.scriptId, m.params.url));
    // Same-thread sessions answer synchronously: every script already parsed is reported inside this call.
    session.post('Debugger.enable', () => undefined);
    for (const fn of wanted) {
      g[PROBE] = fn;
      session.post('Runtime.evaluate', { expression: `globalThis.${PROBE}` }, (err, r) => {
        if (err !== null || r.result.objectId === undefined) return;
        session.post('Runtime.getProperties', { objectId: r.result.objectId }, (err2, p) => {
          const loc = err2 === null ? p.internalProperties?.find((x) => x.name === '[[FunctionLocation]]') : undefined;
          const id = (loc?.value?.value as { scriptId?: string } | undefined)?.scriptId;
          const file = id === undefined ? undefined : pathOfUrl(urls.get(id));
          if (file !== undefined && !found.includes(file) && !ownFile(file)) found.push(file);
        });
      });
    }
  } catch {
    // An inspector that refuses (one already paused on, say): no guess, the caller says how to name the module.
  } finally {
    delete g[PROBE];
    session.disconnect();
  }
  return found;
}

/** A script URL as a file path: file: URLs and absolute paths (CommonJS scripts); nothing else (node:, eval). */
function pathOfUrl(url: string | undefined): string | undefined {
  if (url === undefined || url === '') return undefined;
  let p: string | undefined;
  try {
    p = url.startsWith('file:') ? fileURLToPath(url.replace(/[?#].*$/, '')) : isAbsolute(url) ? url : undefined;
  } catch {
    return undefined;
  }
  return p !== undefined && existsSync(p) ? p : undefined;
}

/** retrysim's package root (this file is src/service/ or dist/service/ in it). */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * retrysim's own source or build: an app's handle is retrysim's wrapper, and
 * loading it again outside vitest would load a second copy of retrysim. Its
 * tests and their fixtures (folders named `fixtures`) are users' modules.
 */
function ownFile(file: string): boolean {
  if (!file.startsWith(ROOT)) return false;
  const parts = file.slice(ROOT.length).split(sep);
  return /^(src|dist)$/.test(parts[0] ?? '') && !parts.includes('fixtures') && !parts.includes('node_modules') && !/\.test\.[cm]?[jt]s$/.test(file);
}

/**
 * The user's file that called into retrysim here (a test file calling
 * `replayable(service)`), from the stack; undefined when there is none.
 */
export function callerFile(): string | undefined {
  for (const line of (new Error().stack ?? '').split('\n').slice(1)) {
    const at = /\(?((?:file:\/\/)?\/[^():]+|[A-Za-z]:\\[^():]+):\d+:\d+\)?\s*$/.exec(line)?.[1];
    const file = pathOfUrl(at);
    if (file !== undefined && !ownFile(file) && !file.split(sep).includes('node_modules')) return file;
  }
  return undefined;
}

/** The files a module imports by relative path (import, export … from, import(), require), resolved as TypeScript and Node would. */
function relativeImports(file: string): string[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|\bimport\s+)(['"])(\.{1,2}\/[^'"]+)\1/g)) {
    const base = resolve(dirname(file), m[2]!);
    // './orders.js' names orders.ts in TypeScript's ESM convention; an extensionless path names a file or a folder's index.
    const tries = [base, base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base.replace(/\.cjs$/, '.cts'), ...['.ts', '.mts', '.js', '.mjs', '.cjs', '/index.ts', '/index.js'].map((x) => base + x)];
    const hit = tries.find((t) => existsSync(t) && statSync(t).isFile());
    if (hit !== undefined && !out.includes(hit)) out.push(hit);
  }
  return out;
}

/**
 * The module (a path as `moduleKey` prints it, relative to the working
 * directory) whose loaded exports pass `isIt`, among the files defining
 * `fns` and — for a definition built by a factory in another file — the
 * files `caller` imports that import one of those; undefined when none
 * does. Each candidate is loaded as replay loads it (its top level at the
 * simulation's epoch).
 */
export async function moduleDefining(fns: readonly unknown[], isIt: (exports: Record<string, unknown>) => boolean, caller?: string): Promise<string | undefined> {
  const defining = filesDefining(fns);
  const candidates = [...defining];
  // Only a file that imports a defining file: the test's other imports (a helper starting a server) are not loaded.
  if (caller !== undefined && defining.length > 0) {
    for (const f of relativeImports(caller)) {
      if (!candidates.includes(f) && relativeImports(f).some((g) => defining.includes(g))) candidates.push(f);
    }
  }
  for (const file of candidates) {
    try {
      const mod = unwrapCommonJs(await loadingAt(SIM_EPOCH_MS, () => importUserModule(file)));
      if (isIt(mod)) return moduleKey(file);
    } catch {
      // Not loadable on its own (a file only a bundler resolves): not the module replay needs.
    }
  }
  return undefined;
}
