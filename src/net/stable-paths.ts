/**
 * An answer body as the trace records it: the same text with the places
 * that name this machine's files made machine-independent.
 *
 * Why: a framework's error page (Express's default handler outside
 * production) carries the error's stack, and a stack names absolute paths —
 * the user's checkout, and retrysim's own CLI bundle, whose directory is new
 * each time the bundle is rebuilt (`node_modules/.cache/retrysim/cli-<pid>-<ms>`).
 * Hashed verbatim, one seed gave two traces: `check` and a `replay` started
 * after a rebuild (or on another machine) disagreed on the hash. Paths under
 * the working directory become relative, and the bundle's directory loses
 * its per-build name. Only the recorded copy changes; the client reads the
 * body the app sent.
 */
import { sep } from 'node:path';
import { pathToFileURL } from 'node:url';

const cwd = process.cwd();
const base = cwd.endsWith(sep) ? cwd : cwd + sep;
const baseUrl = pathToFileURL(base).href;
const BUNDLE_DIR = /(\.cache[\\/]retrysim[\\/])cli-\d+-\d+([\\/])/g;

export function stableBody(body: string): string {
  // The common case (JSON without a path) costs two searches.
  if (!body.includes(base) && !body.includes('cli-')) return body;
  return body.replaceAll(baseUrl, '').replaceAll(base, '').replace(BUNDLE_DIR, '$1cli$2');
}

/**
 * The answer's headers as the trace hashes them, for a body {@link stableBody}
 * changed: its `content-length` (which counted the machine's paths) becomes
 * the recorded body's. Unchanged bodies keep their headers as they are.
 */
export function stableHeaders(headers: Record<string, string>, body: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k] = k.toLowerCase() === 'content-length' ? String(Buffer.byteLength(body)) : v;
  return out;
}
