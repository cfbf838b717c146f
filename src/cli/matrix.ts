import { UsageError, flags, seedFlag, usage, writableDir, writableFile } from './args.js';
import { MATRIX_COLUMNS, MATRIX_ROWS, canonicalScenario, rowName, EXPECTED_REPORTS } from '../scenario/canonical.js';
import { runScenario } from '../scenario/run.js';
import { textTable } from '../report/table.js';
import { canonicalFileName } from '../scenario/canonical.js';
import { recordScenario } from '../scenario/record.js';
import { printScenario } from '../scenario/load.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadService } from '../service/load.js';
import { ServiceError } from '../service/errors.js';
import type { ServiceDefinition } from '../service/definition.js';
import { isHostedApp, moduleFlag } from '../app/define.js';
import { plural } from '../service/noun.js';
import { keySourceWords } from '../harness/keys.js';
import { neverSucceeded, type Answers } from '../service/campaign.js';
import { JUDGED_KEY_SOURCES, serviceMatrixCells, serviceMatrixColumns, serviceMatrixFileName, type ServiceMatrixCell } from '../service/matrix.js';

const HELP = `retrysim matrix [--json] [--seed N] [--write-scenarios DIR] [--html FILE]
       retrysim matrix --service PATH | --app PATH [--json] [--seed N] [--write-scenarios DIR] [--html FILE]

Runs every canonical scenario of SPEC §4 (columns) for every write strategy /
key source (rows) and prints how many reports the server holds for the one
logical operation (the goal is 1). Cells that differ from the documented
expectation are marked with '!' and make the exit code 1.

  --json     {"columns": [...], "rows": {"naive/none": {"lost_response": 2, ...}, ...},
              "expected": {same shape}, "matches": {same shape, true/false}, "mismatches": N}
  --seed N   seed for the runs (default 1)
  --write-scenarios DIR
             also write each cell as a replayable scenario file (with its recorded
             schedule) to DIR/<column>/<variant>--<keySource>.json
  --html FILE
             also write the matrix as a page: every cell (and conformance's kill
             column) clickable, each opening its run in the stepper

With --service PATH (or --app PATH), your own service or app instead: one
line per scenario of \`retrysim conformance --service PATH\` (no fault, lost
answers, a crash at each crash point, a concurrent duplicate, two
instances, a kill at each step and as the answer leaves, key reuse), one
column per key source of the built-in client (none, per_attempt,
tool_call, business), each cell one run on the simulation's default
schedule (no real process, not a search), counting the effects the
operation left. The stable-key columns (tool_call, business) are judged:
the goal is no second effect and no invariant broken (0 is a client that
gave up without being told it succeeded); none and per_attempt send a
retry as a new operation and are shown, not judged. --write-scenarios
writes DIR/<scenario>/<keySource>.json, each replayed by \`retrysim replay
--service PATH FILE --trace\`.

Exit: 0 every cell as expected, 1 a cell differs, 2 bad flags or a broken
service (nothing written), 4 (--service) inconclusive: no stable-key cell
was answered 2xx or made an effect.`;

/** Writes every canonical cell, with its recorded schedule, under `dir`. */
export async function writeCanonical(dir: string, seed = 1): Promise<string[]> {
  const written: string[] = [];
  for (const row of MATRIX_ROWS) {
    for (const col of MATRIX_COLUMNS) {
      const { scenario } = await recordScenario(canonicalScenario(col, row, seed));
      const file = join(dir, canonicalFileName(col, row));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, printScenario(scenario));
      written.push(file);
    }
  }
  return written;
}

/** Computes the matrix: row name → column → reports held. */
export async function computeMatrix(seed = 1): Promise<Record<string, Record<string, number>>> {
  const rows: Record<string, Record<string, number>> = {};
  for (const row of MATRIX_ROWS) {
    const cells: Record<string, number> = {};
    for (const col of MATRIX_COLUMNS) cells[col] = (await runScenario(canonicalScenario(col, row, seed))).reports.op1!;
    rows[rowName(row)] = cells;
  }
  return rows;
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const a = flags('matrix', argv, { json: { type: 'boolean' }, seed: { type: 'string' }, 'write-scenarios': { type: 'string' }, html: { type: 'string' }, service: { type: 'string' } }, HELP);
  if (typeof a === 'number') return a;
  const module = a.values.service;
  if (module !== undefined) return serviceMatrix(module, a.values);
  return usage('matrix', () => matrix(a.values, seedFlag(a.values.seed)));
}

async function matrix(values: { json?: boolean; 'write-scenarios'?: string; html?: string }, seed: number): Promise<number> {
  const dir = values['write-scenarios'];
  // Every output path before any work.
  if (values.html !== undefined) writableFile('html', values.html);
  if (dir !== undefined) writableDir('write-scenarios', dir);
  if (dir !== undefined) {
    const files = await writeCanonical(dir, seed);
    console.error(`wrote ${files.length} scenario files under ${dir}`);
  }
  // With --html the page's runs are the ones printed: one set of runs, one truth.
  const rows = values.html === undefined ? await computeMatrix(seed) : await (await import('../report/html/matrix-page.js')).writeMatrixPage(values.html, seed);
  if (values.html !== undefined) console.error(`wrote ${values.html}`);
  const expected: Record<string, Record<string, number | null>> = {};
  const matches: Record<string, Record<string, boolean>> = {};
  let mismatches = 0;
  for (const [name, cells] of Object.entries(rows)) {
    expected[name] = {};
    matches[name] = {};
    for (const c of MATRIX_COLUMNS) {
      const want = EXPECTED_REPORTS[name]?.[c];
      expected[name]![c] = want ?? null;
      matches[name]![c] = want === cells[c];
      if (want !== cells[c]) mismatches++;
    }
  }
  const code = mismatches === 0 ? 0 : 1;
  if (values.json) {
    console.log(JSON.stringify({ columns: MATRIX_COLUMNS, rows, expected, matches, mismatches }));
    return code;
  }
  console.log(`retrysim matrix — seed ${seed}; reports held for one logical operation (goal: 1)\n`);
  console.log(textTable(['variant/keySource', ...MATRIX_COLUMNS], Object.entries(rows).map(([name, cells]) =>
    [name, ...MATRIX_COLUMNS.map((c) => `${cells[c]}${matches[name]![c] ? '' : ` ! (expected ${expected[name]![c] ?? 'nothing written down'})`}`)])));
  console.log('\nColumns: SPEC §4 canonical scenarios 1–6. Each cell is one deterministic run; replay any cell with');
  console.log('  retrysim replay scenarios/canonical/<column>/<variant>--<keySource>.json --trace');
  console.log(mismatches === 0 ? 'Every cell holds the expected count (src/scenario/canonical.ts).' : `${mismatches} cell(s) differ from the expected count (src/scenario/canonical.ts).`);
  return code;
}

/**
 * `retrysim matrix --service PATH`: the user's service or app, a row per key
 * source, conformance's columns, on the simulation only. Bad flags and a
 * module that does not load or is not a service are one line, exit 2, before
 * anything is written; a service that breaks during a run (a handler that
 * misbehaves in a way retrysim names) is the same line check gives, exit 2.
 */
async function serviceMatrix(module: string, values: { json?: boolean; seed?: string; 'write-scenarios'?: string; html?: string }): Promise<number> {
  let def: ServiceDefinition | undefined;
  let seed = 1;
  const dir = values['write-scenarios'];
  const bad = await usage('matrix', async () => {
    seed = seedFlag(values.seed);
    if (values.html !== undefined) writableFile('html', values.html);
    if (dir !== undefined) writableDir('write-scenarios', dir);
    try {
      def = await loadService(module);
    } catch (e) {
      if (e instanceof ServiceError) throw new UsageError(e.message);
      throw e;
    }
    return 0;
  });
  if (bad !== 0) return bad;
  const d = def!;
  let cells: ServiceMatrixCell[];
  const answers: Answers = { succeeded: false, others: new Set() };
  try {
    // With --html the page's runs are the ones printed: one set of runs, one truth.
    cells = values.html === undefined ? await serviceMatrixCells(d, module, seed, undefined, answers) : await (await import('../report/html/matrix-page.js')).writeServiceMatrixPage(values.html, d, module, seed, answers);
  } catch (e) {
    if (e instanceof ServiceError) {
      console.error(`retrysim matrix: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (values.html !== undefined) console.error(`wrote ${values.html}`);
  if (dir !== undefined) {
    for (const c of cells) {
      const file = join(dir, serviceMatrixFileName(c));
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, printScenario(c.scenario));
    }
    console.error(`wrote ${cells.length} scenario files under ${dir}`);
  }
  const columns = serviceMatrixColumns(cells);
  const rows: Record<string, Record<string, number>> = {};
  const violations: Record<string, Record<string, string[]>> = {};
  const matches: Record<string, Record<string, boolean>> = {};
  for (const c of cells) {
    (rows[c.keySource] ??= {})[c.column] = c.effects;
    (violations[c.keySource] ??= {})[c.column] = c.violations;
    (matches[c.keySource] ??= {})[c.column] = c.ok;
  }
  const differ = cells.filter((c) => !c.ok);
  // No stable-key cell answered 2xx or made an effect: "no cell misses" would be about a service that never
  // did its work (a handler that throws on every request) — inconclusive, exit 4, as check and conformance say.
  const judgedRuns = cells.filter((c) => c.judged).length;
  const inconclusive = differ.length === 0 && !answers.succeeded ? `inconclusive: ${neverSucceeded(d, module, judgedRuns, answers).replace(`no request of the ${judgedRuns} runs`, `no request in the ${judgedRuns} stable-key cells`)}` : null;
  const code = differ.length > 0 ? 1 : inconclusive !== null ? 4 : 0;
  const noun = d.effects.noun ?? 'effect';
  if (values.json) {
    console.log(JSON.stringify({ service: d.name, module, app: isHostedApp(d), noun, seed, columns, keySources: Object.keys(rows), judged: JUDGED_KEY_SOURCES, rows, violations, matches, mismatches: differ.length, inconclusive }));
    return code;
  }
  const flag = moduleFlag(d);
  console.log(`retrysim matrix ${flag} ${module} — ${isHostedApp(d) ? 'app' : 'service'} ${d.name}, seed ${seed}; ${plural(noun)} held for one logical operation (goal with a stable key: never two, no invariant broken)\n`);
  // One line per scenario and a column per key source: an app has a crash and a kill column per store
  // command (25 in all), too many to read across a terminal.
  const keySources = Object.keys(rows) as Array<ServiceMatrixCell['keySource']>;
  console.log(textTable(['scenario', ...keySources.map((k) => `${k}${JUDGED_KEY_SOURCES.includes(k) ? '' : ' (not judged)'}`)], columns.map((col) => [
    col,
    ...keySources.map((k) => {
      const c = cells.find((x) => x.keySource === k && x.column === col);
      if (c === undefined) return '-';
      return c.ok ? String(c.effects) : `${c.effects} !${c.violations.length > 0 ? ` (${c.violations.join(', ')})` : ''}`;
    }),
  ])));
  console.log(`\nColumns: where the built-in client's Idempotency-Key comes from — ${keySources.map((k) => `${k}: ${keySourceWords(k)}`).join('; ')}.`);
  console.log(`tool_call and business keep one key across a call's retries and are judged (goal: never a second ${noun}, no invariant broken — 0 is a client that gave up`);
  console.log(`without being told it succeeded); none and per_attempt send a retry as a new operation, shown, not judged.`);
  console.log(`Lines: the scenarios of retrysim conformance ${flag} ${module} (which runs them against real processes too). Each cell is one run on the simulation's default schedule,`);
  console.log(`not a search: retrysim check ${flag} ${module} searches interleavings and faults. --write-scenarios DIR writes each cell as DIR/<scenario>/<keySource>.json,`);
  console.log(`replayed by retrysim replay ${flag} ${module} FILE --trace.`);
  const none = cells.filter((c) => c.judged && c.ok && c.effects === 0);
  if (none.length > 0 && inconclusive === null) console.log(`${none.length} judged cell(s) made no ${noun}, and no invariant says the client was told otherwise: it gave up (${none.map((c) => `${c.keySource} ${c.column}`).join('; ')}).`);
  if (inconclusive !== null) console.log(`? ${inconclusive}`);
  else if (differ.length === 0) console.log(`No judged cell holds a second ${noun} or breaks an invariant.`);
  else {
    console.log(`${differ.length} judged cell(s) differ from the goal:`);
    for (const c of differ) console.log(`  ${c.keySource} ${c.column}: ${c.effects} ${c.effects === 1 ? noun : plural(noun)}${c.violations.length > 0 ? `; broken: ${c.violations.join(', ')}` : ''}`);
  }
  return code;
}
