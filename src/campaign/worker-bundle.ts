import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * A worker thread's code as one CommonJS file, so the thread starts as fast
 * as the main thread (which runs from bin/retrysim.js's bundle): registering
 * tsx inside every worker starts a loader thread and esbuild per worker and
 * compiles every source file again (~0.2 s each). Packages stay external
 * (resolved from node_modules at run time: better-sqlite3 is native). The
 * file is cached under node_modules/.cache/retrysim, keyed by a SHA-256 of
 * every input, so it never runs stale code. Undefined when esbuild cannot be
 * loaded or the cache cannot be written; the caller then uses tsx.
 */
export async function workerBundle(root: string, name: string, entry: string): Promise<string | undefined> {
  const cacheDir = join(root, 'node_modules', '.cache', 'retrysim');
  const manifestPath = join(cacheDir, `${name}.json`);
  try {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as { inputs: string[]; hash: string; file: string };
    if (hashInputs(root, m.inputs) === m.hash) return join(cacheDir, m.file);
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
    const r = esbuild.buildSync({
      entryPoints: [entry], bundle: true, format: 'cjs', platform: 'node', target: 'node20',
      packages: 'external', write: false, metafile: true, absWorkingDir: root, logLevel: 'silent',
    });
    const inputs = Object.keys(r.metafile.inputs).sort();
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

function hashInputs(root: string, inputs: string[]): string {
  const h = createHash('sha256');
  for (const f of inputs) h.update(f).update('\0').update(readFileSync(join(root, f))).update('\0');
  return h.digest('hex');
}
