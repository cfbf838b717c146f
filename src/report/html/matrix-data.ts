import { MATRIX_COLUMNS, MATRIX_ROWS, EXPECTED_REPORTS, canonicalFileName, canonicalScenario, rowName } from '../../scenario/canonical.js';
import { KILL_COLUMN, conformanceScenario } from '../../real/conformance.js';
import { observeScenario } from './stepper-data.js';
import { printScenario } from '../../scenario/load.js';
import { scheduleOf } from '../../scenario/record.js';
import type { MatrixPageData } from './matrix-types.js';
import type { ServiceDefinition } from '../../service/definition.js';
import { JUDGED_KEY_SOURCES, serviceMatrixCells, serviceMatrixColumns, serviceMatrixFileName, type ServiceMatrixCell } from '../../service/matrix.js';
import { isHostedApp, moduleFlag } from '../../app/define.js';
import { plural } from '../../service/noun.js';
import { ListChoice } from '../../sim/choice/list.js';
import type { StepperData } from './stepper-types.js';
import type { Answers } from '../../service/campaign.js';

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

/**
 * A user's service matrix (`retrysim matrix --service PATH --html FILE`):
 * every cell observed for the stepper, each offered as a scenario file (a
 * user's service has no checked-in ones), and the cells themselves, so the
 * command prints the very runs the page shows.
 */
export async function serviceMatrixPageData(def: ServiceDefinition, module: string, seed = 1, answers?: Answers): Promise<{ data: MatrixPageData; cells: ServiceMatrixCell[] }> {
  const flag = moduleFlag(def);
  const observed: StepperData[] = [];
  const cells = await serviceMatrixCells(def, module, seed, async (s, reached) => {
    const { data, run } = await observeScenario(s, {}, { service: def, choices: new ListChoice([]), reached });
    observed.push(data);
    return run;
  }, answers);
  const page: MatrixPageData['cells'] = {};
  cells.forEach((c, i) => {
    const file = serviceMatrixFileName(c).replace('/', '--');
    // The cell's file records what its run did as its expect (as --write-scenarios writes it): the page shows
    // that file's run, so its expect is the file's, met — not the empty one the run was made with.
    const run = { ...observed[i]!, replay: `retrysim replay ${flag} ${module} ${file} --trace   (save it with the link above)`, expect: { reports: { op1: c.effects }, violations: c.violations, met: true, problems: [] } };
    // A line per scenario and a column per key source, as the command prints it (an app has 25 scenarios).
    (page[c.column] ??= {})[c.keySource] = { reports: c.effects, violations: c.violations, run, save: { file, text: printScenario(c.scenario) }, judged: c.judged, ok: c.ok };
  });
  const data: MatrixPageData = {
    seed,
    subject: { kind: isHostedApp(def) ? 'app' : 'service', name: def.name, module, flag, noun: def.effects.noun ?? 'effect', nouns: plural(def.effects.noun ?? 'effect'), judged: [...JUDGED_KEY_SOURCES] },
    columns: [...new Set(cells.map((c) => c.keySource))],
    rows: serviceMatrixColumns(cells),
    cells: page,
  };
  return { data, cells };
}
