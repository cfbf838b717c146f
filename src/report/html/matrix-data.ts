import { MATRIX_COLUMNS, MATRIX_ROWS, EXPECTED_REPORTS, canonicalFileName, canonicalScenario, rowName } from '../../scenario/canonical.js';
import { KILL_COLUMN, conformanceScenario } from '../../real/conformance.js';
import { observeScenario } from './stepper-data.js';
import { printScenario } from '../../scenario/load.js';
import { scheduleOf } from '../../scenario/record.js';
import type { MatrixPageData } from './matrix-types.js';

/**
 * Runs every canonical cell — the six matrix columns (slow takeover among
 * them) and conformance's kill column — observed, so each cell carries its
 * count from the real run and the run itself for the stepper. The counts
 * are the runs' own, never the expected table (which is shown beside them).
 */
export async function matrixPageData(seed = 1): Promise<MatrixPageData> {
  const columns = [...MATRIX_COLUMNS, KILL_COLUMN];
  const cells: MatrixPageData['cells'] = {};
  for (const row of MATRIX_ROWS) {
    const name = rowName(row);
    const mine: MatrixPageData['cells'][string] = {};
    for (const col of columns) {
      const kill = col === KILL_COLUMN;
      const s = kill ? await conformanceScenario(col, row, seed) : canonicalScenario(col as (typeof MATRIX_COLUMNS)[number], row, seed);
      // The kill column has no checked-in file: the page offers this run as one (schedule included), and replaying that file is the reproduce line.
      const killFile = `${KILL_COLUMN}--${name.replace(/\//g, '--')}.json`;
      const replay = kill
        ? `retrysim replay ${killFile} --trace   (save it with the link above; retrysim conformance --rows ${name} --columns ${KILL_COLUMN} runs its real twin)`
        : seed === 1 ? `retrysim replay scenarios/canonical/${canonicalFileName(col as (typeof MATRIX_COLUMNS)[number], row)} --trace` : `retrysim matrix --seed ${seed}`;
      const { data, run } = await observeScenario(s, { replay });
      const expected = kill ? undefined : EXPECTED_REPORTS[name]?.[col as (typeof MATRIX_COLUMNS)[number]];
      const violations = [...new Set(run.violations.map((v) => v.invariant))].sort();
      const save = kill ? { file: killFile, text: printScenario({ ...s, schedule: scheduleOf(run.result.choices), expect: { reports: { ...run.reports }, violations } }) } : undefined;
      mine[col] = { reports: run.reports.op1 ?? 0, ...(expected !== undefined ? { expected } : {}), violations, run: data, ...(save ? { save } : {}) };
    }
    cells[name] = mine;
  }
  return { seed, columns, rows: MATRIX_ROWS.map(rowName), cells };
}

/** The numbers of the six matrix columns, shaped as `retrysim matrix --json`'s rows. */
export function matrixRows(d: MatrixPageData): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const row of d.rows) out[row] = Object.fromEntries(MATRIX_COLUMNS.map((c) => [c, d.cells[row]![c]!.reports]));
  return out;
}
