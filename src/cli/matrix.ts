import { flags, seedFlag, usage, writableDir, writableFile } from './args.js';
import { MATRIX_COLUMNS, MATRIX_ROWS, canonicalScenario, rowName, EXPECTED_REPORTS } from '../scenario/canonical.js';
import { runScenario } from '../scenario/run.js';
import { textTable } from '../report/table.js';
import { canonicalFileName } from '../scenario/canonical.js';
import { recordScenario } from '../scenario/record.js';
import { printScenario } from '../scenario/load.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const HELP = `retrysim matrix [--json] [--seed N] [--write-scenarios DIR] [--html FILE]

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

Exit: 0 every cell as expected, 1 a cell differs, 2 bad flags (nothing written).`;

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
  const a = flags('matrix', argv, { json: { type: 'boolean' }, seed: { type: 'string' }, 'write-scenarios': { type: 'string' }, html: { type: 'string' } }, HELP);
  if (typeof a === 'number') return a;
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
