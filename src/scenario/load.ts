import { closeSync, fstatSync, openSync, readFileSync, constants } from 'node:fs';

import { SCENARIO_FORMAT, scenarioSchema, type Scenario } from './schema.js';
import type { ServiceDefinition } from '../service/definition.js';
import { builtinDeploymentProblem, builtinService } from '../tracker/builtin.js';

/** One problem in a scenario file, at a JSON path such as `faults.kill.atMs`. */
export interface ScenarioIssue {
  path: string;
  message: string;
}

/** A scenario file that cannot be run; `issues` name each bad path. */
export class ScenarioError extends Error {
  constructor(
    readonly source: string,
    readonly issues: readonly ScenarioIssue[],
  ) {
    super(`${source}: invalid scenario\n` + issues.map((i) => `  at ${i.path || '(root)'}: ${i.message}`).join('\n'));
    this.name = 'ScenarioError';
  }
}

/** Why a file could not be read, in words (the code too, for a search). */
const READ_PROBLEMS: Record<string, string> = { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'a directory, not a file', ENOTDIR: 'a path through something that is not a directory' };

/** A scenario file that cannot be read at all: one line, nothing about its contents (there are none to speak of). */
export class ScenarioReadError extends ScenarioError {
  constructor(source: string, code: string) {
    const why = READ_PROBLEMS[code] === undefined ? code : `${READ_PROBLEMS[code]} (${code})`;
    super(source, [{ path: '', message: `cannot read file: ${why}` }]);
    this.message = `${source}: cannot read file: ${why}`;
  }
}

function pathOf(p: readonly PropertyKey[]): string {
  return p.map((s) => (typeof s === 'number' ? `[${s}]` : `.${String(s)}`)).join('').replace(/^\./, '');
}

/**
 * Parses and validates scenario JSON text. Never throws anything but
 * {@link ScenarioError}, whatever the input.
 */
export function parseScenario(text: string, source = 'scenario'): Scenario {
  let raw: unknown;
  // A UTF-8 byte-order mark is how some editors start a file; it is not JSON
  // but it is not the user's content either.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ScenarioError(source, [{ path: '', message: `not JSON: ${(e as Error).message}` }]);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ScenarioError(source, [{ path: '', message: 'expected a JSON object' }]);
  }
  const fmt = (raw as Record<string, unknown>).format;
  if (fmt !== SCENARIO_FORMAT) {
    throw new ScenarioError(source, [{
      path: 'format',
      message: typeof fmt === 'string' && fmt.startsWith('retrysim.scenario/')
        ? `unsupported version '${fmt}'; this build reads '${SCENARIO_FORMAT}'${fmt === 'retrysim.scenario/1' ? ' (run `retrysim migrate FILE` to convert it)' : ''}`
        : `expected '${SCENARIO_FORMAT}', got ${JSON.stringify(fmt)}`,
    }]);
  }
  const r = scenarioSchema.safeParse(raw);
  if (!r.success) throw new ScenarioError(source, r.error.issues.map((i) => ({ path: pathOf(i.path), message: i.message })));
  const issues = crossCheck(r.data);
  if (issues.length > 0) throw new ScenarioError(source, issues);
  return r.data;
}

/** Checks that need more than one field. */
function crossCheck(s: Scenario): ScenarioIssue[] {
  const out: ScenarioIssue[] = [];
  const ids = new Set<string>();
  const runIds = new Set<string>();
  s.operations.forEach((op, i) => {
    if (ids.has(op.id)) out.push({ path: `operations[${i}].id`, message: `duplicate operation id '${op.id}'` });
    // The checkers find an operation's reports by (tenant, runId).
    const run = JSON.stringify([op.tenant ?? 'default', op.runId]);
    if (runIds.has(run)) out.push({ path: `operations[${i}].runId`, message: `duplicate runId '${op.runId}' in tenant '${op.tenant ?? 'default'}' (each operation needs its own)` });
    ids.add(op.id);
    runIds.add(run);
  });
  s.operations.forEach((op, i) => {
    if (op.keyFrom !== undefined && (!ids.has(op.keyFrom) || op.keyFrom === op.id)) {
      out.push({ path: `operations[${i}].keyFrom`, message: `keyFrom '${op.keyFrom}' must name another operation` });
    }
  });
  for (const k of Object.keys(s.expect.reports ?? {})) {
    if (!ids.has(k)) out.push({ path: `expect.reports.${k}`, message: `no operation with id '${k}'` });
  }
  const kill = s.faults.kill;
  // A built-in's steps are known now; a user module's when it is loaded (serviceOf).
  if (s.service.variant !== undefined) out.push(...faultPlacementIssues(s, builtinService(s.service.variant)));
  // Without a crash point to count, "its n-th reach" names nothing: the crash would strike the first point reached, silently.
  if (s.faults.crashAtNth !== undefined && s.faults.crashAt === undefined) out.push({ path: 'faults.crashAtNth', message: 'counts the reaches of faults.crashAt, which is not given' });
  // The same for the slow fault: its default step is the service's (unknown here), and a count of an unnamed step reads as a mistake.
  if (s.faults.slowAtStepNth !== undefined && s.faults.slowAtStep === undefined) out.push({ path: 'faults.slowAtStepNth', message: 'counts the reaches of faults.slowAtStep, which is not given' });
  if (kill && kill.instance >= s.service.instances) {
    out.push({ path: 'faults.kill.instance', message: `instance ${kill.instance} does not exist (service.instances = ${s.service.instances})` });
  }
  if (s.service.clockOffsetMs.length > s.service.instances) {
    out.push({ path: 'service.clockOffsetMs', message: `${s.service.clockOffsetMs.length} offsets for ${s.service.instances} instance(s)` });
  }
  if (s.service.variant !== undefined && !s.service.allowUnsafeLease) {
    const p = builtinDeploymentProblem(s.service.variant, { leaseMs: s.service.leaseMs, clientTimeoutMs: s.client.timeoutMs, processingMs: s.faults.slowMs });
    if (p !== null) out.push({ path: 'service.leaseMs', message: `${p} (set service.allowUnsafeLease to build it on purpose)` });
  }
  return out;
}

/**
 * Faults a scenario pins to a step or crash point that the service does not
 * declare: such a fault would silently never fire. Checked against the
 * service the scenario runs, built-in or a user's module alike, once it is
 * known (a built-in when the file is parsed, a module when it is loaded).
 */
export function faultPlacementIssues(s: Scenario, def: Pick<ServiceDefinition, 'name' | 'steps' | 'crashPoints'>): ScenarioIssue[] {
  const out: ScenarioIssue[] = [];
  const check = (path: string, v: string | undefined, list: readonly string[], what: string): void => {
    if (v !== undefined && !list.includes(v)) out.push({ path, message: `'${v}' is not a ${what} of ${def.name} (its ${what}s: ${list.join(', ') || 'none'})` });
  };
  check('faults.pause.atStep', s.faults.pause?.atStep, def.steps, 'step');
  check('faults.kill.atStep', s.faults.kill?.atStep, def.steps, 'step');
  check('faults.slowAtStep', s.faults.slowAtStep, def.steps, 'step');
  check('faults.crashAt', s.faults.crashAt, def.crashPoints ?? [], 'crash point');
  return out;
}

/** Reads and validates a scenario file. */
export function loadScenario(file: string): Scenario {
  let text: string;
  try {
    // Opened without blocking and checked to be a regular file before
    // reading: a FIFO with no writer would block forever, a directory or a
    // device is no scenario.
    const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      if (!fstatSync(fd).isFile()) throw Object.assign(new Error('not a regular file'), { code: 'not a regular file' });
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw new ScenarioReadError(file, (e as NodeJS.ErrnoException).code ?? (e as Error).message);
  }
  return parseScenario(text, file);
}

/**
 * Prints a scenario as readable JSON: fields in schema order, two-space
 * indent, one schedule decision per line. parse ∘ print is the identity.
 */
export function printScenario(s: Scenario): string {
  const normal = scenarioSchema.parse(s); // fills defaults, fixes key order
  const marker = '"__schedule__"';
  const head = JSON.stringify({ ...normal, schedule: '__schedule__' }, null, 2);
  const sched = normal.schedule.length === 0
    ? '[]'
    : '[\n' + normal.schedule.map((c) => '    ' + JSON.stringify(c)).join(',\n') + '\n  ]';
  return head.replace(marker, sched) + '\n';
}

