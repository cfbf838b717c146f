import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * A worker thread's code as one CommonJS file, so the thread starts as fast
 * as the main thread (which runs from bin/retrysim.js's bundle): registering
 * tsx inside every worker starts a loader thread and esbuild per worker and
 * compiles every source file again (~0.2 s each). Packages stay external
 * (resolved from node_modules at run time: better-sqlite3 is native), but
 * for {@link BUNDLED_PACKAGES}, as in bin/retrysim.js's bundle. The
 * file is cached under node_modules/.cache/retrysim, keyed by a SHA-256 of
 * every input, so it never runs stale code. Undefined when esbuild cannot be
 * loaded or the cache cannot be written; the caller then uses tsx.
 */
export async function workerBundle(root: string, name: string, entry: string): Promise<string | undefined> {
  const cacheDir = join(root, 'node_modules', '.cache', 'retrysim');
  const manifestPath = join(cacheDir, `${name}.json`);
  // This builder is always an input: a change to how the bundle is made rebuilds it.
  const builder = relative(root, fileURLToPath(import.meta.url));
  try {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as { inputs: string[]; hash: string; file: string };
    if (m.inputs.includes(builder) && hashInputs(root, m.inputs) === m.hash) return join(cacheDir, m.file);
  } catch {
    // no cache yet, or an input is gone: build
  }
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  try {
    // import.meta.url becomes each source file's own URL (CommonJS has no
    // import.meta), so code that finds files next to itself works as under tsx.
    const metaUrl: import('esbuild').Plugin = {
      name: 'retrysim-import-meta-url',
      setup(b) {
        b.onLoad({ filter: /\.[cm]?ts$/ }, (args) => ({
          contents: readFileSync(args.path, 'utf8').replaceAll(META_URL, JSON.stringify(pathToFileURL(args.path).href)),
          loader: 'ts',
        }));
      },
    };
    const external: import('esbuild').Plugin = {
      name: 'retrysim-bundled-packages',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED_PACKAGES.test(args.path) || args.importer.includes('/node_modules/') ? undefined : { path: args.path, external: true }));
      },
    };
    const r = await esbuild.build({
      entryPoints: [entry], bundle: true, format: 'cjs', platform: 'node', target: 'node20',
      write: false, metafile: true, absWorkingDir: root, logLevel: 'silent', plugins: [metaUrl, external],
    });
    // The bundled packages are pinned by package-lock.json: their files are not hashed at every start.
    const inputs = [...new Set([...Object.keys(r.metafile.inputs).filter((f) => !f.startsWith('node_modules/')), builder, 'package-lock.json'])].sort();
    const hash = hashInputs(root, inputs);
    const file = `${name}-${hash.slice(0, 16)}.cjs`;
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(join(cacheDir, file), r.outputFiles[0]!.text);
    const tmp = `${manifestPath}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ inputs, hash, file, entry: relative(root, entry) }));
    renameSync(tmp, manifestPath);
    return join(cacheDir, file);
  } catch {
    return undefined; // read-only checkout or a build problem: the caller falls back to tsx
  }
}

/**
 * Pure-JS packages compiled into the bundle instead of loaded from
 * node_modules by every thread: zod alone is about a hundred modules to
 * resolve and compile at each start (bin/retrysim.js bundles the same).
 */
export const BUNDLED_PACKAGES = /^(zod|@sinonjs\/[^/]+)(\/|$)/;

/**
 * The expression to replace, spelled so that it does not appear literally in
 * this file: the CLI's own bundler rewrites every literal occurrence.
 */
const META_URL = ['import', 'meta', 'url'].join('.');

function hashInputs(root: string, inputs: string[]): string {
  const h = createHash('sha256');
  for (const f of inputs) h.update(f).update('\0').update(readFileSync(join(root, f))).update('\0');
  return h.digest('hex');
}
