/**
 * Loads a user's ES-module TypeScript file (a `.ts` under `"type":
 * "module"`, a `.mts`) without a module loader thread.
 *
 * tsx's `tsImport` registers Node's module hooks, which in Node 20 run on a
 * thread of their own: starting it and routing every import through it cost
 * ~0.35 s of CPU (~0.25 s of wall time) per command — two thirds more than
 * the rest of a `replay` or a short `check`. Instead, each of the user's own
 * TypeScript files is compiled once by esbuild (the compiler tsx uses) into
 * a plain `.mjs` file in a cache folder, every import in it pointing at an
 * absolute URL — another compiled file for the user's next `.ts`, the file
 * itself for JavaScript and for packages (resolved as Node resolves them,
 * the `import` export or `main`, from where the source file is, not from
 * the cache) — and Node imports it natively. One compiled file per source
 * file, so a file two of the user's modules import is one module, as under
 * tsx; `import.meta.url`, `.filename` and `.dirname` are the source file's;
 * inline source maps make stacks name the `.ts` file and line.
 *
 * The next start reads a manifest and compares SHA-256s of what the build
 * depended on — the sources, the folders they sit in (a new `x.ts` beside
 * an imported `x.js`), each package.json and tsconfig.json that could apply,
 * each package imported — so it never runs stale code and needs no esbuild.
 * Anything unusual (a compile error, a `.cts` or CommonJS `.ts` in the
 * graph, an asset import, a computed `import()`, `import.meta.resolve`, a
 * read-only cache) returns `undefined`, and the caller loads the module
 * through tsx as before, with tsx's errors.
 * `RETRYSIM_TS_CACHE=0` always does (another value than 0 or 1 is an error);
 * `RETRYSIM_TS_CACHE_DEBUG=1` says on stderr why a module went to tsx.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { dirname, extname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Bumped when what this file writes changes shape (old caches then miss). */
const FORMAT = 2;
const TS_SOURCE = new Set(['.ts', '.mts', '.tsx']);
const JS_NATIVE = new Set(['.js', '.mjs', '.cjs', '.node']);
const BUILTIN = new Set(builtinModules);
/** The cache folder holds at most this many files; past it, a miss clears it first. */
const FILES_MAX = 4_000;

/** Thrown inside a build when the graph needs tsx: the caller falls back. */
class NeedsTsx extends Error {}

/** retrysim's package root: this file is src/service/ts-cache.ts or dist/service/ts-cache.js. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'retrysim', 'ts');

const META = (field: string): string => ['import', 'meta', field].join('.');

const sha = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** What a cache entry depends on: `f:` a file's bytes, `d:` a folder's names, `x:` that a path does not exist. */
type Watch = Record<string, string>;

function fingerprint(key: string): string {
  const [kind, path] = [key.slice(0, 2), key.slice(2)];
  try {
    if (kind === 'x:') return existsSync(path) ? 'present' : '';
    if (kind === 'd:') return sha(readdirSync(path).sort().join('\0'));
    return sha(readFileSync(path));
  } catch {
    return 'missing';
  }
}

interface Manifest {
  format: number;
  esbuild: string;
  node: string;
  entry: string;
  /** Every compiled file the entry's graph imports (a pruned one is a miss). */
  outs: string[];
  watch: Watch;
}

let esbuildVersion: string | undefined;
function esbuildVersionOf(): string {
  esbuildVersion ??= (JSON.parse(readFileSync(createRequire(import.meta.url).resolve('esbuild/package.json'), 'utf8')) as { version: string }).version;
  return esbuildVersion;
}

/** The compiled file of source `abs` (one per source path). */
function outOf(abs: string): string {
  return join(CACHE_DIR, `${sha(abs).slice(0, 24)}.mjs`);
}

function manifestOf(abs: string): string {
  return join(CACHE_DIR, `${sha(abs).slice(0, 24)}.json`);
}

/** Every package.json and tsconfig.json from `dir` up (present or not: one created later changes the build). */
function configsUp(dir: string, watch: Watch): void {
  for (let d = dir; ; d = dirname(d)) {
    for (const f of ['package.json', 'tsconfig.json']) {
      const p = join(d, f);
      if (existsSync(p)) watch[`f:${p}`] = '';
      else watch[`x:${p}`] = '';
    }
    if (dirname(d) === d) return;
  }
}

/** The package.json of the package a resolved file under node_modules belongs to. */
function packageJsonOf(file: string): string | undefined {
  for (let d = dirname(file); dirname(d) !== d; d = dirname(d)) {
    const p = join(d, 'package.json');
    if (existsSync(p)) return p;
    if (d.endsWith(`${sep}node_modules`)) return undefined;
  }
  return undefined;
}

function writeAtomic(path: string, text: string): void {
  try {
    if (readFileSync(path, 'utf8') === text) return;
  } catch {
    // not there yet
  }
  const tmp = `${path}.${process.pid}.${sha(`${path}${process.hrtime.bigint()}`).slice(0, 8)}.tmp`; // real-time: allowed (a unique temporary name, host code)
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** Whether `abs` is a `.ts` file Node would read as CommonJS (its package.json without "type": "module"). */
export type CommonJsTs = (abs: string) => boolean;

/**
 * Compiles the graph of user TypeScript files under `entry` into the cache:
 * the watch list, or a {@link NeedsTsx} thrown.
 */
async function compile(entry: string, commonJsTs: CommonJsTs): Promise<{ watch: Watch; outs: string[] }> {
  const esbuild = await import('esbuild');
  const watch: Watch = {};
  const queue = [entry];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const src = queue.shift()!;
    watch[`f:${src}`] = '';
    watch[`d:${dirname(src)}`] = '';
    configsUp(dirname(src), watch);
    const url = pathToFileURL(src).href;
    let result;
    try {
      result = await esbuild.build({
        entryPoints: [src],
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        // Resolve packages as Node does: no "module" condition or field (esbuild's defaults add both).
        conditions: ['node'],
        mainFields: ['main'],
        sourcemap: 'inline',
        outfile: outOf(src),
        logLevel: 'silent',
        // Each file is built alone, so these are its own, as under tsx.
        // (keys spelled out of parts: retrysim's own bundler rewrites that expression in its sources, strings too)
        define: { [META('url')]: JSON.stringify(url), [META('filename')]: JSON.stringify(src), [META('dirname')]: JSON.stringify(dirname(src)) },
        plugins: [
          {
            name: 'retrysim-one-file',
            setup(build) {
              build.onResolve({ filter: /.*/ }, async (args) => {
                if (args.kind === 'entry-point' || (args.pluginData as { inner?: boolean } | undefined)?.inner === true) return undefined;
                const bare = args.path.startsWith('node:') ? args.path.slice(5) : args.path;
                if (BUILTIN.has(bare) || BUILTIN.has(bare.split('/')[0]!)) return { path: args.path, external: true };
                const r = await build.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { inner: true } });
                if (r.errors.length > 0 || r.external || r.path === '') throw new NeedsTsx(`cannot resolve ${args.path}`);
                const p = r.path;
                const ext = extname(p);
                const inPackages = p.includes(`${sep}node_modules${sep}`);
                if (ext === '.json') {
                  watch[`f:${p}`] = '';
                  return { path: p }; // inlined, as tsx lets a JSON file be imported without an attribute
                }
                if (TS_SOURCE.has(ext)) {
                  if (commonJsTs(p)) throw new NeedsTsx(`${p} is CommonJS TypeScript`);
                  if (!seen.has(p)) {
                    seen.add(p);
                    queue.push(p);
                  }
                  return { path: pathToFileURL(outOf(p)).href, external: true };
                }
                if (!JS_NATIVE.has(ext)) throw new NeedsTsx(`${p} is neither JavaScript nor TypeScript`);
                if (inPackages) {
                  const pkg = packageJsonOf(p);
                  if (pkg !== undefined) watch[`f:${pkg}`] = '';
                } else {
                  watch[`d:${dirname(p)}`] = '';
                }
                watch[`x:${p}`] = '';
                return { path: pathToFileURL(p).href, external: true };
              });
            },
          },
        ],
      });
    } catch (e) {
      if (e instanceof NeedsTsx) throw e;
      // A compile error: tsx says it the way users already read it.
      throw new NeedsTsx(String(e));
    }
    const text = result.outputFiles.find((f) => f.path.endsWith('.mjs'))?.text;
    if (text === undefined) throw new NeedsTsx('no output');
    // What only a loader could give the cached file: the source's import.meta.resolve, a computed import(), require.
    if (/\bimport\.meta\b/.test(text) || /\bimport\s*\(\s*(?!["'`]|\))/.test(text) || text.includes('Dynamic require of')) throw new NeedsTsx('needs a loader');
    writeAtomic(outOf(src), text);
  }
  for (const k of Object.keys(watch)) watch[k] = fingerprint(k);
  return { watch, outs: [...seen].map(outOf) };
}

function fresh(m: Manifest, entry: string): boolean {
  if (m.format !== FORMAT || m.entry !== entry || m.node !== process.version || !Array.isArray(m.outs) || !m.outs.every((o) => existsSync(o))) return false;
  if (m.esbuild !== esbuildVersionOf()) return false;
  for (const [k, v] of Object.entries(m.watch)) if (fingerprint(k) !== v) return false;
  return true;
}

/**
 * Keeps the folder from growing without end (temporary projects each leave
 * their files): past {@link FILES_MAX} files, those not written for a day
 * go. A manifest whose compiled files went is a miss; one process's files
 * never vanish under its import, which follows its check by milliseconds.
 */
function prune(): void {
  try {
    const names = readdirSync(CACHE_DIR);
    if (names.length <= FILES_MAX) return;
    const dayAgo = Date.now() - 86_400_000; // real-time: allowed (cache housekeeping, host code)
    for (const n of names) {
      const p = join(CACHE_DIR, n);
      try {
        if (statSync(p).mtimeMs < dayAgo) rmSync(p, { force: true });
      } catch {
        // another process pruned it
      }
    }
  } catch {
    // nothing to prune
  }
}

/**
 * The cached compiled file of the ES-module TypeScript `entry` (absolute
 * path), compiled first when its manifest is stale; `undefined` when the
 * graph needs tsx (see the file's comment).
 */
export async function compiledTs(entry: string, commonJsTs: CommonJsTs): Promise<string | undefined> {
  const setting = process.env.RETRYSIM_TS_CACHE;
  // A typo ('false', 'off') must not leave the cache on without a word: the user asked for tsx.
  if (setting !== undefined && setting !== '' && setting !== '0' && setting !== '1') throw new Error(`RETRYSIM_TS_CACHE must be 0 (load TypeScript through tsx) or 1 (the compile cache, the default), got '${setting}'`);
  if (setting === '0') return undefined;
  const manifestPath = manifestOf(entry);
  try {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
    if (fresh(m, entry)) return outOf(entry);
  } catch {
    // no manifest, or an unreadable one: compile
  }
  try {
    prune();
    mkdirSync(CACHE_DIR, { recursive: true });
    const { watch, outs } = await compile(entry, commonJsTs);
    const m: Manifest = { format: FORMAT, esbuild: esbuildVersionOf(), node: process.version, entry, outs, watch };
    writeAtomic(manifestPath, JSON.stringify(m));
    return outOf(entry);
  } catch (e) {
    // NeedsTsx, no esbuild, a read-only folder: tsx loads it as before.
    if (process.env.RETRYSIM_TS_CACHE_DEBUG === '1') process.stderr.write(`retrysim: ${entry} through tsx: ${String(e)}\n`);
    return undefined;
  }
}

/**
 * Whether loading a compiled file failed on the cache itself: a compiled
 * file gone (pruned by another process), or a link error naming one (an
 * import of a name the other module does not export: said of the cache's
 * file, where tsx names the user's). Nothing of the module ran; the caller
 * loads it through tsx, whose message names the user's files.
 */
export function failedInCache(e: unknown): boolean {
  const message = e instanceof Error ? e.message : '';
  return message.includes(CACHE_DIR) || message.includes(pathToFileURL(CACHE_DIR).href);
}
