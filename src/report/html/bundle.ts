import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/**
 * Builds a page's client-side script: a TypeScript entry under ./client,
 * bundled with esbuild into one minified IIFE for the browser, inlined into
 * the page (no server, no network). The herd explorer's bundle contains the
 * real engine (src/herd, src/sim, src/random, src/backoff) — the same source
 * the CLI runs, not a copy.
 *
 * The engine's only Node import on the browser's path is node:crypto (the
 * kernel's Trace hashes with it; the herd runs with tracing off, so it is
 * never called): it is replaced by a stub that throws if it ever is. Any
 * other Node or package import is a build error naming it, so a page can
 * never quietly depend on something that does not exist in a browser.
 */

/** The client entries, one per page. */
export type ClientEntry = 'stepper' | 'herd' | 'matrix';

const here = dirname(fileURLToPath(import.meta.url));
const built = new Map<ClientEntry, Promise<string>>();

/** The entry's bundle (built once per process). */
export function clientScript(entry: ClientEntry): Promise<string> {
  let p = built.get(entry);
  if (p === undefined) {
    p = build(entry);
    built.set(entry, p);
    p.catch(() => built.delete(entry));
  }
  return p;
}

async function build(entry: ClientEntry): Promise<string> {
  const esbuild = await import('esbuild');
  const r = await esbuild.build({
    entryPoints: [join(here, 'client', `${entry}-main.ts`)],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'chrome110',
    minify: true,
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
    absWorkingDir: join(here, '..', '..', '..'),
    plugins: [browserOnly],
  });
  const text = r.outputFiles[0]!.text;
  // esbuild escapes "</script" in strings; check anyway, since the script is inlined.
  if (/<\/script/i.test(text)) throw new Error(`client bundle '${entry}' contains "</script": cannot inline it`);
  return text;
}

const browserOnly = {
  name: 'retrysim-browser-only',
  setup(b: import('esbuild').PluginBuild) {
    b.onResolve({ filter: /^node:crypto$/ }, () => ({ path: 'node:crypto', namespace: 'retrysim-stub' }));
    b.onResolve({ filter: /^(node:|[a-z@])/ }, (args) => ({
      errors: [{ text: `the browser bundle reached '${args.path}' (imported by ${args.importer}): pages may only use code that runs in a browser` }],
    }));
    b.onLoad({ filter: /.*/, namespace: 'retrysim-stub' }, () => ({
      contents: 'const no = () => { throw new Error("node:crypto is not available in the page (trace hashing is off here)"); }; export const createHash = no; export const hash = no;',
      loader: 'js',
    }));
  },
};
