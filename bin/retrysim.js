#!/usr/bin/env node
// Entry point. The TypeScript sources run as they are (no build step after
// `npm ci`), two ways:
//
// - Fast path: an esbuild bundle of src/cli/main.ts cached under
//   node_modules/.cache/retrysim. Starting from it takes a few tens of ms,
//   against ~0.2 s for registering tsx and compiling every file on the fly —
//   which is the whole time budget of a command like `retrysim herd`.
//   The cache is keyed by a SHA-256 of every file that went into the bundle
//   (plus this file, package.json and tsconfig.json), checked on every
//   start, so it never runs stale code; on a miss it is rebuilt (~0.2 s,
//   once per change of the sources).
// - Fallback: register tsx and import the sources, used whenever anything
//   about the bundle is off (no esbuild, read-only checkout, a build or load
//   error) and when RETRYSIM_NO_BUNDLE=1.
//
// The published package has no sources, only the plain JavaScript build in
// dist/ (`npm run build`, run by `npm pack`): then that is what runs.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// `retrysim ... | head` closes stdout early; that is not an error. Any other
// failure to write (a full disk: `> /dev/full`) is one line and exit 1.
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  process.stderr.write(`retrysim: cannot write output: ${e.code ?? e.message}${e.code === 'ENOSPC' ? ' (no space left on device)' : ''}\n`);
  process.exit(1);
});

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = join(root, 'node_modules', '.cache', 'retrysim');
const manifestPath = join(cacheDir, 'cli.json');
/** Files that shape the bundle besides its inputs. */
const EXTRA_INPUTS = ['bin/retrysim.js', 'package.json', 'package-lock.json', 'tsconfig.json'];
/** Packages compiled into the bundle rather than loaded from node_modules at each start (see buildEntry). */
const BUNDLED_PACKAGES = /^(zod|@sinonjs\/[^/]+)(\/|$)/;

function hashInputs(inputs) {
  const h = createHash('sha256');
  // The bundle bakes in absolute file URLs (import.meta.url, worker entries),
  // so a cache copied along with node_modules into another checkout must miss.
  h.update(root).update('\0');
  for (const f of inputs) h.update(f).update('\0').update(readFileSync(join(root, f))).update('\0');
  return h.digest('hex');
}

/** The cached bundle's entry when its inputs are unchanged; undefined otherwise. */
function cachedEntry() {
  let m;
  try {
    m = JSON.parse(readFileSync(manifestPath, 'utf8'));
  } catch {
    return undefined; // no cache yet
  }
  if (!Array.isArray(m.inputs) || typeof m.hash !== 'string' || typeof m.dir !== 'string') return undefined;
  try {
    if (hashInputs(m.inputs) !== m.hash) return undefined;
  } catch {
    return undefined; // an input was deleted
  }
  return join(cacheDir, m.dir, 'main.mjs');
}

/**
 * Builds the bundle into a directory of its own, then publishes it by
 * renaming a new manifest into place (so concurrent starts never see half a
 * bundle, and a damaged bundle is never reused: every build gets a fresh
 * directory). Returns the entry file.
 */
async function buildEntry() {
  const esbuild = await import('esbuild');
  const dir = `cli-${process.pid}-${Date.now()}`;
  const out = join(cacheDir, dir);
  // import.meta.url is replaced by each source file's own URL, so code that
  // finds files next to itself (worker entries, bin/) behaves as under tsx.
  const seen = new Map(); // path → the bytes that went into the bundle
  const metaUrl = {
    name: 'retrysim-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.[cm]?ts$/ }, (args) => {
        const bytes = readFileSync(args.path);
        seen.set(args.path, bytes);
        return { contents: bytes.toString('utf8').replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
      });
    },
  };
  // Packages stay external (resolved from node_modules at run time, as under
  // tsx), but for pure-JS ones whose many small files dominate a start:
  // zod alone is ~100 ES modules to resolve and compile on every command.
  // What a bundled package imports (type-detect, for @sinonjs/commons) goes
  // in with it, as in dist/vendor/, rather than resolved from the cache folder.
  const bundledPackages = {
    name: 'retrysim-bundled-packages',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => (BUNDLED_PACKAGES.test(args.path) || args.importer.includes('/node_modules/') ? undefined : { path: args.path, external: true }));
    },
  };
  let r;
  try {
    r = await esbuild.build({
      entryPoints: [join(root, 'src', 'cli', 'main.ts')],
      bundle: true,
      splitting: true, // subcommands stay lazy: `--help` loads no SQLite
      format: 'esm',
      platform: 'node',
      target: 'node20',
      plugins: [metaUrl, bundledPackages],
      // The bundled CommonJS packages (@sinonjs/*) call require(): give every chunk one.
      banner: { js: "import { createRequire as __retrysimRequire } from 'node:module'; const require = __retrysimRequire(import.meta.url);" },
      outdir: out,
      outExtension: { '.js': '.mjs' },
      metafile: true,
      absWorkingDir: root,
      logLevel: 'silent',
    });
  } finally {
    await esbuild.stop?.();
  }
  // The bundled packages are pinned by package-lock.json (an input): their files are not hashed on every start.
  const inputs = [...new Set([...Object.keys(r.metafile.inputs).filter((f) => !f.startsWith('node_modules/')), ...EXTRA_INPUTS])].sort();
  for (const f of inputs) if (f.startsWith('..') || f.includes(':')) throw new Error(`bundle input outside the repository: ${f}`);
  const hash = hashInputs(inputs);
  // A source edited during the build would leave a bundle of the old text
  // under the new text's hash: refuse to cache (the caller falls back to tsx).
  for (const [p, bytes] of seen) if (!readFileSync(p).equals(bytes)) throw new Error(`${p} changed during the bundle build`);
  const manifestTmp = `${manifestPath}.${process.pid}`;
  writeFileSync(manifestTmp, JSON.stringify({ inputs, hash, dir }));
  renameSync(manifestTmp, manifestPath);
  pruneOld(dir);
  return join(cacheDir, dir, 'main.mjs');
}

/** Removes bundles of older sources (after an hour, so running processes keep their lazy chunks). */
function pruneOld(keep) {
  try {
    for (const d of readdirSync(cacheDir)) {
      if (!d.startsWith('cli-') || d === keep) continue;
      const p = join(cacheDir, d);
      if (Date.now() - statSync(p).mtimeMs > 3_600_000) rmSync(p, { recursive: true, force: true });
    }
  } catch {
    // best effort
  }
}

async function loadBundled() {
  mkdirSync(cacheDir, { recursive: true });
  const entry = cachedEntry() ?? (await buildEntry());
  return (await import(pathToFileURL(entry).href)).main;
}

async function loadWithTsx() {
  const { register } = await import('tsx/esm/api');
  register();
  return (await import('../src/cli/main.ts')).main;
}

// The CLI arms the watchdog against user code that never returns the main
// thread (src/sim/watchdog.ts): 10 s inside one request without a step.
process.env.RETRYSIM_WATCHDOG_MS ??= '10000';

let main;
if (!existsSync(join(root, 'src', 'cli', 'main.ts'))) {
  main = (await import('../dist/cli/main.js')).main;
} else if (process.env.RETRYSIM_NO_BUNDLE !== '1') {
  try {
    main = await loadBundled();
    if (typeof main !== 'function') main = undefined;
  } catch {
    // Anything off with the bundle: run the sources through tsx, and drop
    // the manifest so that the next start builds a fresh bundle.
    main = undefined;
    rmSync(manifestPath, { force: true });
  }
}
main ??= await loadWithTsx();
const code = await main(process.argv.slice(2));
process.exitCode = code;
// The command is done, so the process ends here: a user's module may have
// left a real handle behind (a token refresher's setInterval started at
// import, a metrics flush), which kept the process alive after its verdict,
// forever. Output still buffered for a pipe is flushed first.
await Promise.all([process.stdout, process.stderr].map((s) => new Promise((resolve) => (s.writableLength === 0 ? resolve() : s.write('', resolve)))));
process.exit(code);
