import { flags, seedFlag, usage, UsageError } from './args.js';
import { textTable } from '../report/table.js';
import { CONFORMANCE_COLUMNS, runConformance, type ConformanceCell } from '../real/conformance.js';
import { MATRIX_ROWS, rowName } from '../scenario/canonical.js';
import { KEY_SOURCES, keySourceWords, type KeySource } from '../harness/keys.js';
import { loadService } from '../service/load.js';
import { isHostedApp, moduleFlag } from '../app/define.js';
import { ServiceError } from '../service/errors.js';
import { runServiceConformance, serviceColumns, type ServiceConformanceCell } from '../real/service-conformance.js';
import { SETTLE_LIMIT_MS } from '../real/scenario-real.js';

/**
 * The column being run, on stderr: rewritten in place on a terminal; in a
 * log (CI, `2>file`) one line per column, since carriage returns there
 * pile every column into one unreadable line.
 */
function cellProgress(text: string): void {
  process.stderr.write(process.stderr.isTTY ? `\r${text}`.padEnd(70) : `${text}\n`);
}

/** Ends the in-place progress line (a terminal only: in a log each column already has its line). */
function progressDone(): void {
  if (process.stderr.isTTY) process.stderr.write('\n');
}
import type { ServiceDefinition } from '../service/definition.js';
import { plural } from '../service/noun.js';

const HELP = `retrysim conformance [--json] [--seed N] [--rows R,R] [--columns C,C]
retrysim conformance --service PATH [--key-source K] [--json] [--seed N] [--columns C,C]

Runs every canonical scenario (the cells of \`retrysim matrix\`) twice: in the
simulation, and for real against \`retrysim serve\` child processes on a
SQLite file, with real faults, real time and real processes (the kill column
is a real SIGKILL of the server, restarted on the same database file). Prints
both tables side by side, as "sim | real" per cell, and exits 1 on any
difference (reports held, or the set of broken invariants).

  --json          one JSON object: {"seed", "columns", "cells": [...], "differences"}
  --seed N        seed of both worlds (default 1)
  --rows R,...    only these rows, e.g. key_atomic/tool_call
  --columns C,... only these columns (${CONFORMANCE_COLUMNS.join(', ')})

A full run (49 cells, one server process each) takes one to a few minutes.

With --service PATH, your own service (the module of \`check --service\`) is
held against \`retrysim serve --service PATH\` processes instead: one column
per scenario built from what it declares — no_fault, lost_response,
lost_answer, crash_at:<point> per crash point, concurrent_duplicate,
two_instances, kill_at:<step> per step (a real SIGKILL, restarted on the same
file), kill_at:answer (the same, once the handler returned, before its answer
leaves), key_reuse (not for a service whose operation.readsKey is false) —
compared on the effects left and the invariants broken.
A service that declares \`progress\` gets the recovery phase on both sides
(the faults stop, settleMs passes, the operation is queried and resubmitted)
and progress judged on both: the "in the end" column says how the operation
ended (succeeded, found, resubmitted, refused, gave_up). --app PATH is
--service PATH for an unmodified Node app (a module whose default export is
an app descriptor).
  --key-source K  (with --service) where the built-in client's Idempotency-Key comes from:
                  ${KEY_SOURCES.map((k) => `${k} (${keySourceWords(k)})`).join(', ')}; default tool_call

Exit: 0 both worlds agree in every cell, 1 a difference, 2 bad flags or a
broken service, 4 inconclusive (with --service: no column made an effect or
got a 2xx in either world).`;

/**
 * A comma list of names, each one of `known`; absent → undefined (all). An
 * empty list or an unknown name is a usage error: running zero cells and
 * reporting "no differences" would be a silent no-op.
 */
function list(flag: string, v: string | undefined, known: readonly string[]): string[] | undefined {
  if (v === undefined) return undefined;
  const names = v.split(',').map((x) => x.trim());
  if (names.every((x) => x === '')) throw new UsageError(`--${flag} '${v}' names nothing; known: ${known.join(', ')}`);
  for (const x of names) if (!known.includes(x)) throw new UsageError(`unknown --${flag} entry '${x}'; known: ${known.join(', ')}`);
  return [...new Set(names)];
}

/** The side-by-side table: one row per matrix row, "sim | real" per column; '≠' marks a difference. */
export function conformanceTable(cells: readonly ConformanceCell[]): string {
  const columns = [...new Set(cells.map((c) => c.column))];
  const rows = [...new Set(cells.map((c) => c.row))];
  return textTable(['variant/keySource (sim | real)', ...columns], rows.map((r) => [r, ...columns.map((col) => {
    const c = cells.find((x) => x.row === r && x.column === col);
    if (!c) return '';
    return `${c.sim.reports} | ${c.real.reports}${c.same ? '' : ' ≠'}`;
  })]));
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = flags('conformance', argv, {
      json: { type: 'boolean' }, seed: { type: 'string' }, rows: { type: 'string' }, columns: { type: 'string' },
      service: { type: 'string' }, 'key-source': { type: 'string' },
    }, HELP);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values;
  let seed: number;
  let rows: string[] | undefined;
  let columns: string[] | undefined;
  if (values.service !== undefined) return conformService(values.service, values);
  const bad = await usage('conformance', async () => {
    if (values['key-source'] !== undefined) throw new UsageError('--key-source goes with --service (the matrix rows fix their own key sources)');
    seed = seedFlag(values.seed);
    rows = list('rows', values.rows, MATRIX_ROWS.map(rowName));
    columns = list('columns', values.columns, CONFORMANCE_COLUMNS);
    return 0;
  });
  if (bad !== 0) return bad;
  return conform(values.json === true, seed!, rows, columns);
}

async function conform(json: boolean, seed: number, rows: string[] | undefined, columns: string[] | undefined): Promise<number> {
  const values = { json };
  const t0 = Date.now();
  let cells: ConformanceCell[];
  try {
    cells = await runConformance({
      seed,
      rows,
      columns,
      onCell: values.json ? undefined : (c, i, n) => cellProgress(`[${i}/${n}] ${c.row} ${c.column}`),
    });
  } catch (e) {
    // The inputs were checked above: what fails here is the real world (a
    // server that would not start, a port, a file), not the command line.
    if (!values.json) progressDone();
    console.error(`retrysim conformance: ${(e as Error).message}`);
    return 1;
  }
  const diffs = cells.filter((c) => !c.same);
  if (values.json) {
    console.log(JSON.stringify({ seed, columns: [...new Set(cells.map((c) => c.column))], cells, differences: diffs.length }));
    return diffs.length === 0 ? 0 : 1;
  }
  progressDone();
  console.log(`retrysim conformance — seed ${seed}; reports held for one logical operation, simulation | real processes\n`);
  console.log(conformanceTable(cells));
  const kills = cells.reduce((n, c) => n + c.real.kills, 0);
  console.log(`\n${cells.length} cells in ${((Date.now() - t0) / 1000).toFixed(1)} s wall time; ${kills} real SIGKILL(s) survived.`);
  for (const d of diffs) {
    console.log(`DIFFERENT ${d.row} × ${d.column}: sim ${d.sim.reports} report(s) [${d.sim.violations.join(', ')}], ` +
      `real ${d.real.reports} [${d.real.violations.join(', ')}]`);
  }
  console.log(diffs.length === 0 ? 'No differences: the model predicts the real service in every cell.' : `${diffs.length} difference(s).`);
  return diffs.length === 0 ? 0 : 1;
}

/**
 * The side-by-side table of a service's columns: effects "sim | real", the
 * broken invariants, and whether the two worlds agree ('yes', or '≠ no').
 * Every column has a header and every cell says something: a blank cell
 * reads as a column the table forgot to fill.
 */
export function serviceConformanceTable(cells: readonly ServiceConformanceCell[], noun: string): string {
  const inv = (v: readonly string[]) => (v.length === 0 ? '-' : v.join(', '));
  const progress = cells.some((c) => c.sim.eventually !== 'not judged' || c.real.eventually !== 'not judged');
  return textTable(['column', `${plural(noun)} (sim | real)`, ...(progress ? ['in the end (sim | real)'] : []), 'broken (sim | real)', 'sim = real'], cells.map((c) => [
    c.column,
    `${c.sim.effects} | ${c.real.effects}`,
    ...(progress ? [`${c.sim.eventually} | ${c.real.eventually}`] : []),
    `${inv(c.sim.violations)} | ${inv(c.real.violations)}`,
    // A kill column whose process was never killed (the service never reached that step: an app's
    // store command it does not use) compares two runs without the fault: it agrees, and says so.
    `${c.same ? 'yes' : '≠ no'}${c.column.startsWith('kill_at:') && c.real.kills === 0 ? ' (no kill: never reached)' : ''}`,
  ]));
}

async function conformService(module: string, values: { json?: boolean; seed?: string; rows?: string; columns?: string; 'key-source'?: string }): Promise<number> {
  let def: ServiceDefinition | undefined;
  let seed = 1;
  let columns: string[] | undefined;
  let keySource: KeySource = 'tool_call';
  const bad = await usage('conformance', async () => {
    if (values.rows !== undefined) throw new UsageError('--rows names matrix rows of the built-in tracker; with --service there is one service and --columns picks the scenarios');
    seed = seedFlag(values.seed);
    keySource = (values['key-source'] ?? 'tool_call') as KeySource;
    if (!KEY_SOURCES.includes(keySource)) throw new UsageError(`--key-source must be one of ${KEY_SOURCES.join(', ')}, got '${keySource}'`);
    try {
      def = await loadService(module);
    } catch (e) {
      if (e instanceof ServiceError) throw new UsageError(e.message);
      throw e;
    }
    columns = list('columns', values.columns, serviceColumns(def, module, keySource, seed).map((c) => c.name));
    return 0;
  });
  if (bad !== 0) return bad;
  const t0 = Date.now();
  let cells: ServiceConformanceCell[];
  try {
    cells = await runServiceConformance({
      def: def!, module, keySource, seed, columns,
      onCell: values.json ? undefined : (c, i, n) => cellProgress(`[${i}/${n}] ${c.column}`),
    });
  } catch (e) {
    if (!values.json) progressDone();
    // A broken service is named as such (exit 2); anything else failing here is the real world (a server, a port, a file).
    if (e instanceof ServiceError) {
      console.error(`retrysim conformance: ${e.message}`);
      return 2;
    }
    console.error(`retrysim conformance: ${(e as Error).message}`);
    return 1;
  }
  const diffs = cells.filter((c) => !c.same);
  const vacuous = diffs.length === 0 ? doneNothing(cells, plural(def!.effects.noun ?? 'effect')) : null;
  const code = diffs.length > 0 ? 1 : vacuous !== null ? 4 : 0;
  if (values.json) {
    console.log(JSON.stringify({ service: def!.name, module, keySource, keys: keySourceWords(keySource), seed, columns: cells.map((c) => c.column), cells, differences: diffs.length, inconclusive: vacuous }));
    return code;
  }
  progressDone();
  const noun = def!.effects.noun ?? 'effect';
  console.log(`retrysim conformance ${moduleFlag(def)} ${module} — ${isHostedApp(def!) ? 'app' : 'service'} ${def!.name}, ${keySourceWords(keySource)}, seed ${seed}; ${plural(noun)} held for one logical operation, simulation | real processes\n`);
  console.log(serviceConformanceTable(cells, noun));
  const kills = cells.reduce((n, c) => n + c.real.kills, 0);
  console.log(`\n${cells.length} columns in ${((Date.now() - t0) / 1000).toFixed(1)} s wall time; ${kills} real SIGKILL(s) survived.`);
  for (const d of diffs) {
    console.log(`DIFFERENT ${d.column}: sim ${d.sim.effects} ${noun}(s) [${d.sim.violations.join(', ')}], real ${d.real.effects} [${d.real.violations.join(', ')}]`);
  }
  // Progress is a verdict on the service, not a difference: said per column, whichever side saw it.
  for (const c of cells.filter((x) => x.sim.violations.includes('progress') || x.real.violations.includes('progress'))) {
    console.log(`NO PROGRESS ${c.column}: the operation never succeeded once the faults stopped and settleMs passed (recovery: sim ${c.sim.eventually}, real ${c.real.eventually}; progress broken in ${[c.sim.violations.includes('progress') ? 'sim' : '', c.real.violations.includes('progress') ? 'real' : ''].filter(Boolean).join(' and ')})`);
  }
  // Read before the real processes were done: the column may differ for that reason alone.
  for (const c of cells.filter((x) => x.real.unsettled.length > 0)) {
    console.log(`UNSETTLED ${c.column}: real ${c.real.unsettled.join(', ')} still at work (requests or deferred timers) after the ${SETTLE_LIMIT_MS / 1000} s settle limit; its ${plural(noun)} were read then`);
  }
  console.log(diffs.length > 0 ? `${diffs.length} difference(s).` : vacuous !== null ? `? inconclusive: ${vacuous}` : 'No differences: the model predicts the real service in every column.');
  return code;
}

/**
 * Why an agreement says nothing, or null: no column made an effect or got
 * a 2xx (the operation never succeeded), in either world — a handler that
 * throws on every request agrees with itself. `check --service` calls the
 * same thing inconclusive (exit 4).
 */
function doneNothing(cells: readonly ServiceConformanceCell[], nouns: string): string | null {
  const did = (side: ServiceConformanceCell['sim']) => side.effects > 0 || side.eventually === 'succeeded' || side.eventually === 'found' || side.eventually === 'resubmitted';
  if (cells.some((c) => did(c.sim) || did(c.real))) return null;
  return `no column made an effect or got a 2xx answer, in the simulation or for real (0 ${nouns} everywhere): both worlds agreeing on doing nothing says nothing about the service; serve it and send its operation to see why`;
}
