import { resolve } from 'node:path';
import { commonJsTs, importUserModule, unwrapCommonJs } from '../service/load.js';
import { importFresh } from '../app/per-process.js';
import { describeThrow } from '../service/errors.js';
import { loadingAt } from '../sim/load-clock.js';
import type { RetryClient } from './run.js';
import { isThenable } from '../sim/thenable.js';

/**
 * A problem with a user's retry client module (cannot load, no client
 * exported, the named one missing), in one sentence. The CLI prints it
 * alone and exits 2: bad input, not a bug in retrysim.
 */
export class ClientError extends Error {
  /** True for a stop the run's own course led to (the client waits on nothing the run can settle, the run never ends): a campaign writes the run as a file (src/client/stopped-run.ts). */
  ofTheRun = false;
  /** The run's timeline up to the stop, when the run kept its trace (replay --trace shows it). */
  trace?: string[];
  /** Set by a campaign this error stopped: which run, and the file that replays it. */
  stopped?: import('../service/stopped-run.js').StoppedRun;

  constructor(readonly module: string, message: string) {
    super(`client module '${module}': ${message}`);
    this.name = 'ClientError';
  }
}

/** Where a retry client's state belongs, for the line naming a client whose failure depends on more than the run. */
export const CLIENT_STATE_HOME = 'keep what one call needs inside run(), where each call (and each simulated run) starts afresh';

/** Whether a value has the shape of a {@link RetryClient}. */
export function isRetryClient(v: unknown): v is RetryClient {
  const c = v as Partial<RetryClient> | null;
  return typeof c === 'object' && c !== null && typeof c.name === 'string' && c.name !== '' && typeof c.run === 'function' &&
    typeof c.deadlineMs === 'number' && Number.isFinite(c.deadlineMs) && c.deadlineMs > 0;
}

/** What keeps `v` from being a {@link RetryClient}, as the end of a sentence ("its default export …"). */
export function whyNotClient(v: unknown): string {
  if (typeof v !== 'object' && typeof v !== 'function' || v === null) return `is ${v === null ? 'null' : typeof v}, not a retry client { name, deadlineMs, run(fetch, op) }`;
  // `import * as mod` given where its client goes: the namespace has the client as a property, no run of its own.
  const inside = Object.entries(v).filter(([, x]) => isRetryClient(x)).map(([k]) => k);
  if (typeof (v as { run?: unknown }).run !== 'function' && inside.length > 0) return `is not a retry client but holds ${inside.length === 1 ? 'one' : 'some'} (a module's namespace, from import * as mod?): pass ${inside.length === 1 ? 'it' : 'one of them'}, ${inside.slice(0, 3).map((k) => `mod.${k}`).join(', ')}`;
  if (typeof v === 'function') return `is a function, not a retry client: export the object it returns (export default ${/^$|^default$|^__/.test(v.name) ? 'makeClient' : v.name}())`; // an anonymous `export default function` is named 'default' (under vitest, __vite_ssr_export_default__)
  const c = v as Record<string, unknown>;
  const problem = typeof c.name !== 'string' ? 'name is missing (a string naming the client)'
    : c.name === '' ? 'name is empty'
    : typeof c.run !== 'function' ? 'run(fetch, op) is missing'
    : c.deadlineMs === undefined ? 'deadlineMs is missing (the ms within which one call settles, a positive number)'
    : `deadlineMs is ${typeof c.deadlineMs === 'string' ? `'${c.deadlineMs}'` : String(c.deadlineMs)}, not a finite positive number of ms`;
  return `is not a retry client: ${problem}`;
}

/**
 * Loads a user's retry client module (TypeScript or JavaScript, no build
 * step) and picks a client: the exported one whose `name` is `name`, or
 * without a name the default export (else the only client it exports). A
 * module may export several (a buggy and a fixed one); a counterexample
 * file records which by name. `o.epochMs`: the wall-clock instant its top
 * level reads (`Date.now()`, `new Date()`), as a simulated process started
 * then would (a scenario's `client.epochMs`; check --client's 2026-01-01).
 */
export async function loadClient(path: string, name?: string, o: { epochMs?: number } = {}): Promise<RetryClient> {
  let mod: Record<string, unknown>;
  try {
    // `epochMs`: the module's top level runs at the simulation's start (t = 0 of every run, on the client's
    // epoch), as a fresh copy's does inside a run (freshClientLoader); without it, on the machine's clock.
    mod = o.epochMs === undefined ? await importUserModule(path) : await loadingAt(o.epochMs, () => importUserModule(path));
  } catch (e) {
    throw new ClientError(path, `cannot load: ${(e as Error).message}`);
  }
  return pickClient(mod, path, name);
}

/**
 * A loader of fresh copies of a client's module, one per simulated client
 * process (src/app/per-process.ts: the module and everything it imports,
 * its own files and its libraries, evaluated again): each call gives the
 * client named `name` from a new copy, so what that copy keeps at module
 * level (a counter, a breaker, a retry budget) is that process's alone.
 * Called from inside a run (src/client/run.ts), where the copy's top level
 * reads the run's clock and seeded randomness.
 */
export function freshClientLoader(path: string, name: string): () => Promise<RetryClient> {
  const abs = resolve(path);
  return async () => {
    let mod: Record<string, unknown>;
    try {
      mod = unwrapCommonJs(await importFresh(abs, commonJsTs(abs)));
    } catch (e) {
      throw new ClientError(path, `cannot load afresh for a simulated client process: ${describeThrow(e)}`);
    }
    return pickClient(mod, path, name);
  };
}

/** The client of a loaded module: by `name`, else the default export, else the only one (see {@link loadClient}). */
function pickClient(mod: Record<string, unknown>, path: string, name: string | undefined): RetryClient {
  const clients = [...new Set(Object.values(mod).filter(isRetryClient))];
  const names = clients.map((c) => `'${c.name}'`).join(', ') || 'none';
  if (name !== undefined) {
    const c = clients.find((x) => x.name === name);
    if (c === undefined) throw new ClientError(path, `exports no client named '${name}' (it exports: ${names})`);
    return c;
  }
  if (isRetryClient(mod.default)) return mod.default;
  // `export default makeClient()` of an async maker: a Promise, whose fields are all missing.
  if (isThenable(mod.default)) {
    throw new ClientError(path, "its default export is a Promise (an async function's result): export the client itself, { name, deadlineMs, run(fetch, op) }, awaiting what it needs at the module's top level (top-level await)");
  }
  if (clients.length === 1) return clients[0]!;
  if (clients.length === 0) {
    // An export that looks meant as a client (the default, or an object with a name or a run) is told what it lacks.
    const meant = [['default', mod.default] as const, ...Object.entries(mod).filter(([k]) => k !== 'default')].find(([, v]) => v !== undefined && (typeof v === 'function' || (typeof v === 'object' && v !== null && ('run' in v || 'name' in v || 'deadlineMs' in v))));
    if (meant !== undefined) throw new ClientError(path, `its ${meant[0] === 'default' ? 'default export' : `export '${meant[0]}'`} ${whyNotClient(meant[1])}`);
    throw new ClientError(path, 'exports no retry client: export default { name, deadlineMs, run(fetch, op) }');
  }
  throw new ClientError(path, `exports ${clients.length} clients (${names}) and no default; name one with --name`);
}
