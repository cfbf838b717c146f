import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A problem with a user's service (a throw, a request that never answers, a
 * write outside its tables, an undeclared step), stated in one sentence that
 * names the service and what to fix. The CLI prints the message alone and
 * exits 2: it is bad input, not a bug in retrysim.
 */
export class ServiceError extends Error {
  constructor(
    readonly service: string,
    message: string,
  ) {
    super(`service '${service}': ${message}`);
    this.name = 'ServiceError';
  }
}

/** retrysim's own modules that run user code: a frame in one of these is ours, not the user's. */
const lib = dirname(dirname(fileURLToPath(import.meta.url)));
const OWN_DIRS = new Set(['service', 'sim', 'net', 'scenario', 'harness', 'campaign', 'tracker'].map((d) => join(lib, d)));

/**
 * The first line of a user's stack that is not inside retrysim, Node or
 * node_modules: where in *their* code the throw happened.
 */
export function userFrame(e: unknown): string | undefined {
  const stack = e instanceof Error ? e.stack ?? '' : '';
  for (const line of stack.split('\n').slice(1)) {
    const l = line.trim();
    if (!l.startsWith('at ')) continue;
    const m = /\(?((?:file:\/\/)?[^():]+):\d+:\d+\)?$/.exec(l);
    if (m === null) continue;
    const file = m[1]!.startsWith('file://') ? fileURLToPath(m[1]!) : m[1]!;
    if (file.includes(`${sep}node_modules${sep}`) || OWN_DIRS.has(dirname(file))) continue;
    return l.slice(3);
  }
  return undefined;
}

/** `Name: message (at file:line)` for a user's exception. */
export function describeThrow(e: unknown): string {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : `a non-Error value ${JSON.stringify(e) ?? String(e)}`;
  const at = userFrame(e);
  return at === undefined ? text : `${text} (at ${at})`;
}
