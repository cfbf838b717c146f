import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The herd worker's code as one plain CommonJS bundle, so a worker thread
 * starts in ~30 ms instead of ~230 ms: registering tsx inside every worker
 * (the bin/retrysim.js trick) starts a loader thread and esbuild per worker.
 * The bundle is built with esbuild (already installed as tsx's compiler) and
 * cached under node_modules/.cache/retrysim, keyed by a hash of its input
 * files, so later runs skip the build. Returns undefined when esbuild cannot
 * be loaded; the caller then runs in-process.
 */
export async function herdWorkerCode(): Promise<string | undefined> {
  const here = dirname(fileURLToPath(import.meta.url));
  const entry = join(here, 'worker-main.ts');
  const root = join(here, '..', '..');
  const cacheDir = join(root, 'node_modules', '.cache', 'retrysim');
  const manifestPath = join(cacheDir, 'herd-worker.json');
  // The published build has no TypeScript sources to bundle: run in-process.
  if (!existsSync(entry)) return undefined;
  try {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as { inputs: string[]; hash: string; code: string };
    if (hashInputs(root, m.inputs) === m.hash) return m.code;
  } catch {
    // no cache yet, or unreadable: build
  }
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return undefined;
  }
  const r = esbuild.buildSync({ entryPoints: [entry], bundle: true, format: 'cjs', platform: 'node', target: 'node20', write: false, metafile: true, absWorkingDir: root, logLevel: 'silent' });
  const code = r.outputFiles[0]!.text;
  const inputs = Object.keys(r.metafile.inputs).sort();
  try {
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(manifestPath, JSON.stringify({ inputs, hash: hashInputs(root, inputs), code }));
  } catch {
    // read-only checkout: fine, just slower next time
  }
  return code;
}

function hashInputs(root: string, inputs: string[]): string {
  const h = createHash('sha256');
  for (const f of inputs) h.update(f).update('\0').update(readFileSync(join(root, f))).update('\0');
  return h.digest('hex');
}
