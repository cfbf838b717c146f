/**
 * The vitest helper's option objects, checked when the helper is called.
 * TypeScript refuses a wrong option at compile time; a JavaScript test does
 * not, and until 2026-12 `serviceCases(service, { faults: { keyReuseProbe:
 * false } })` stopped the file with "o.faults.includes is not a function"
 * deep in the generator, `faults: 'kill'` generated from the letters of a
 * string, and a typo (`keysource`, `numRuns` given to the helper instead
 * of `test.prop`) was dropped without a word — the property then ran
 * another campaign than the one written. Each is one line here, naming the
 * option, what it got and what it accepts, as a bad flag is on the CLI.
 */
import type { ServiceDefinition } from './service/definition.js';
import { KEY_SOURCES } from './harness/keys.js';
import { BUILTIN_SERVICES } from './tracker/builtin.js';
import { clientFaultProblem } from './client/campaign.js';
import { serviceFaultProblem } from './service/campaign.js';

/** A problem with an option's value, as the end of a sentence ("must be …, got …"), or undefined. */
type Check = (v: unknown) => string | undefined;

/** fast-check's parameters: given to a helper by mistake, the message says where they go. */
const FAST_CHECK_PARAMETERS = new Set(['numRuns', 'seed', 'path', 'timeout', 'interruptAfterTimeLimit', 'skipAllAfterTimeLimit', 'endOnFailure', 'verbose', 'examples', 'markInterruptAsFailure', 'skipEqualValues', 'ignoreEqualValues', 'reporter', 'asyncReporter', 'maxSkipsPerRun', 'unbiased', 'randomType', 'includeErrorInReport']);

/** A value as a message shows it: short, and never a whole object graph. */
export function shown(v: unknown): string {
  if (typeof v === 'function') return `a function${v.name ? ` (${v.name})` : ''}`;
  if (v instanceof URL) return `URL ${v.href}`;
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch {
    text = undefined;
  }
  if (text === undefined) text = String(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/**
 * Refuses, in one line naming `what` (`serviceCases(shop)`), options that
 * are not an object, an option the helper does not have, or a value its
 * check refuses. Undefined options and undefined values are the defaults.
 */
export function checkOptions(what: string, o: unknown, checks: Record<string, Check>): void {
  if (o === undefined) return;
  const names = Object.keys(checks).join(', ');
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new TypeError(`retrysim: ${what}: its options must be an object ({ ${names} }), got ${shown(o)}`);
  for (const [k, v] of Object.entries(o)) {
    const check = checks[k];
    if (check === undefined) {
      const hint = FAST_CHECK_PARAMETERS.has(k) ? ` (${k} is fast-check's: it goes in test.prop's parameters, e.g. { ...replayable(service), ${k}: … })` : '';
      throw new TypeError(`retrysim: ${what}: unknown option '${k}'${hint}; its options are ${names}`);
    }
    if (v === undefined) continue;
    const problem = check(v);
    if (problem !== undefined) throw new TypeError(`retrysim: ${what}: option '${k}' ${problem}`);
  }
}

/** `module`: a path as `retrysim replay` is given it, or a file URL. */
export const moduleCheck: Check = (v) => {
  if (typeof v === 'string') return v.trim() === '' ? 'is empty: give the module\'s path, or new URL(\'./service.ts\', import.meta.url)' : undefined;
  if (v instanceof URL) return v.protocol === 'file:' ? undefined : `must be a file: URL, got ${v.href}`;
  return `must be a path or a file URL (new URL('./service.ts', import.meta.url)), got ${shown(v)}`;
};

/** `keySource`: one of the client's key sources. */
export const keySourceCheck: Check = (v) => ((KEY_SOURCES as readonly unknown[]).includes(v) ? undefined : `must be one of ${KEY_SOURCES.join(', ')}, got ${shown(v)}`);

/** `variant`: a built-in service. */
export const variantCheck: Check = (v) => ((BUILTIN_SERVICES as readonly unknown[]).includes(v) ? undefined : `must be one of the built-in services ${BUILTIN_SERVICES.join(', ')}, got ${shown(v)}`);

/** `foundDir`: a folder. */
export const dirCheck: Check = (v) => (typeof v === 'string' && v.trim() !== '' ? undefined : `must be a folder's path, got ${shown(v)}`);

/** `clockMs`: a function returning elapsed ms. */
export const clockCheck: Check = (v) => (typeof v === 'function' ? undefined : `must be a function returning elapsed ms (leave it out for the machine's clock), got ${shown(v)}`);

/** Anything: checked where it is used (shrinkBudgetMs: shrinkSettingsOf; service: validateDefinition). */
export const checkedWhereUsed: Check = () => undefined;

/** `faults` of a service's cases: an array of names from its fault space (`--faults`'s). */
export function serviceFaultsCheck(def: ServiceDefinition): Check {
  return (v) => faultsProblem(v, (n) => serviceFaultProblem(def, n));
}

/** `faults` of a client's cases: an array of client fault names (`check --client --faults`'s). */
export const clientFaultsCheck: Check = (v) => faultsProblem(v, clientFaultProblem);

function faultsProblem(v: unknown, problemOf: (name: string) => string | undefined): string | undefined {
  // A string is the CLI's spelling ('kill,pause'); an object, a guess at per-fault switches.
  if (!Array.isArray(v)) return `must be an array of fault names (['loseResponse', 'kill']: the faults to generate; leave it out for all), got ${shown(v)}`;
  for (const n of v) {
    if (typeof n !== 'string') return `must hold fault names (strings), got ${shown(n)} in ${shown(v)}`;
    const problem = problemOf(n);
    if (problem !== undefined) return `has ${problem}`;
  }
  return undefined;
}
