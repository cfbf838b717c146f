import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * A problem with a user's service (a throw, a request that never answers, a
 * write outside its tables, an undeclared step), stated in one sentence that
 * names the service and what to fix. The CLI prints the message alone and
 * exits 2: it is bad input, not a bug in retrysim.
 */
/**
 * Names of hosted apps (`appService`): their problems are stated as the
 * app's (`app 'inventory': …`), since the user wrote an app, not a service
 * module (a name is an app's once it has been made a service of).
 */
const appNames = new Set<string>();

/** Remembers that `name` is a hosted app's. */
export function markApp(name: string): void {
  appNames.add(name);
}

/** Whether `name` is a hosted app's (see {@link markApp}). */
export function isAppName(name: string): boolean {
  return appNames.has(name);
}

/** Where a service's per-process state belongs, for the lines naming one whose failure depends on more than the run. */
export const SERVICE_STATE_HOME = 'keep per-process state in memory() (sim.memory), which each instance gets fresh at start and after a restart';
/** The same for a hosted app. */
export const APP_STATE_HOME = 'keep what must outlive a request in the store (env.redis), and per-process state inside app(), which each instance calls afresh';

/** `app 'NAME'` or `service 'NAME'`: what the user calls the code named `name`. */
export function serviceWord(name: string): string {
  return `${appNames.has(name) ? 'app' : 'service'} '${name}'`;
}

export class ServiceError extends Error {
  /** What a real server answers for it, when the service code threw (a 500 without file names or source); undefined: a generic 500. */
  answer?: { status: number; headers: Record<string, string>; body: string };
  /** The run's timeline up to the stop, when the run kept its trace (replay --trace shows it). */
  trace?: string[];
  /**
   * True for a stop the run's own course led to — a request never
   * answered, the run-time limit — which a file of the run can show (a
   * campaign writes it, src/service/stopped-run.ts); false for a module
   * retrysim cannot run as declared (a listen(), a late step), whose one
   * line is all there is to say.
   */
  ofTheRun = false;
  /**
   * An exhaustive search whose runs went another way on one schedule (state
   * kept at module level): `check --app` searches again with one module
   * load per simulated process instead of stopping on it.
   */
  divergedSearch = false;
  /** With {@link divergedSearch}: the decision that differed, in words. */
  divergedAt?: string;
  /** Set by a campaign this error stopped: which run, and the file that replays it (src/service/stopped-run.ts). */
  stopped?: import('./stopped-run.js').StoppedRun;

  constructor(
    readonly service: string,
    message: string,
  ) {
    super(`${serviceWord(service)}: ${message}`);
    this.name = 'ServiceError';
  }
}

/**
 * A failing case that passed when run again in the same process: the
 * service's behaviour depends on more than the run (state kept at module
 * level, carried from one simulated run to the next). `check --app` takes
 * it as a hint to load the app's modules once per simulated process.
 */
export class NotRerunError extends ServiceError {
  /** The campaign's failing run (1-based) and what it broke, when the campaign knows them. */
  failed?: { run: number; invariants: string[] };

  constructor(service: string, message: string) {
    super(service, message);
    this.name = 'NotRerunError';
  }
}

/** retrysim's own modules that run user code: a frame in one of these is ours, not the user's. */
const lib = dirname(dirname(fileURLToPath(import.meta.url)));
const OWN_DIRS = new Set(['service', 'sim', 'net', 'scenario', 'harness', 'campaign', 'tracker'].map((d) => join(lib, d)));

/** Longest message text quoted from a user's exception: a message can carry anything (a whole compiled module, a request body). */
const MESSAGE_MAX = 240;

/**
 * A stack frame's file, as the user knows it: tsx's `?namespace=…` query
 * dropped, and a module compiled into a `data:` URL (whose "file name" is
 * the whole compiled source) named by the file it came from — or by
 * nothing, never by its text.
 */
function frameFile(loc: string): string | undefined {
  if (loc.startsWith('data:')) {
    const m = /__filename%3D%22(.*?)%22/.exec(loc) ?? /__filename="(.*?)"/.exec(loc);
    if (m === null) return undefined;
    try {
      return decodeURIComponent(m[1]!).replace(/\?.*$/, '');
    } catch {
      return undefined;
    }
  }
  if (loc.startsWith('node:') || !/[/\\]/.test(loc)) return undefined; // Node's own modules
  const file = loc.replace(/\?[^/\\]*$/, '');
  return file.startsWith('file://') ? fileURLToPath(file) : file;
}

/**
 * The first line of a user's stack that is not inside retrysim, Node or
 * node_modules: where in *their* code the throw happened, as
 * `fn (file:line:col)` or `file:line:col`.
 */
export function userFrame(e: unknown): string | undefined {
  const stack = e instanceof Error ? e.stack ?? '' : '';
  for (const line of stack.split('\n').slice(1)) {
    const l = line.trim();
    if (!l.startsWith('at ')) continue;
    const m = /^at (?:(.*?) \()?(.+?):(\d+):(\d+)\)?$/.exec(l);
    if (m === null) continue;
    const file = frameFile(m[2]!);
    if (file === undefined || file.includes(`${sep}node_modules${sep}`) || OWN_DIRS.has(dirname(file))) continue;
    const fn = m[1] !== undefined && m[1] !== '<anonymous>' && !m[1].startsWith('data:') && m[1].length <= 80 ? `${m[1]} ` : '';
    return fn === '' ? `${file}:${m[3]}:${m[4]}` : `${fn}(${file}:${m[3]}:${m[4]})`;
  }
  return undefined;
}

/** One line of at most `max` characters (default {@link MESSAGE_MAX}), then `…`. */
export function oneLine(text: string, max = MESSAGE_MAX): string {
  const t = text.replace(/\s*\n\s*/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max)}…`;
}

/** An answer as a campaign that never succeeded quotes it: `404 {"error":"no route"}`, `500 (empty body)`; the body clipped to `max`. */
export function answerLine(status: number, body: string | undefined, max: number): string {
  return `${status} ${body === undefined || body.trim() === '' ? '(empty body)' : oneLine(body, max)}`;
}

/** esbuild's (tsx's) compile error: its first message and where, without the code frame. */
function transformError(e: Error): string | undefined {
  const first = (e as { errors?: Array<{ text?: string; location?: { file?: string; line?: number; column?: number } | null }> }).errors?.[0];
  if (first?.text === undefined) {
    // tsx's rethrown form: "Transform failed with 1 error:\nFILE:L:C: ERROR: text"
    const m = e.name === 'TransformError' ? /(\S+:\d+:\d+): ERROR: ([^\n]*)/.exec(e.message) : null;
    return m === null ? undefined : `SyntaxError: ${oneLine(m[2]!)} (at ${m[1]})`;
  }
  const at = first.location?.file ? ` (at ${first.location.file}:${first.location.line}:${first.location.column})` : '';
  return `SyntaxError: ${oneLine(first.text)}${at}`;
}

/** `Name: message (at file:line)` for a user's exception: one line, no source text. */
export function describeThrow(e: unknown): string {
  if (e instanceof Error) {
    const t = transformError(e);
    if (t !== undefined) return t;
  }
  const text = e instanceof Error ? `${e.name}: ${oneLine(e.message)}` : `a non-Error value ${oneLine(JSON.stringify(e) ?? String(e))}`;
  const at = userFrame(e);
  return at === undefined ? text : `${text} (at ${at})`;
}

/** Marks a stop the run's course led to (see {@link ServiceError.ofTheRun}). */
export function ofTheRun(e: ServiceError): ServiceError {
  e.ofTheRun = true;
  return e;
}
