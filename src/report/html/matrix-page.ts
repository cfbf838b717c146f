import { writeFileSync } from 'node:fs';
import { clientScript } from './bundle.js';
import { htmlPage } from './page.js';
import { BASE_CSS, MATRIX_CSS, STEPPER_CSS } from './styles.js';
import { matrixPageData, matrixRows, serviceMatrixPageData } from './matrix-data.js';
import type { ServiceDefinition } from '../../service/definition.js';
import type { ServiceMatrixCell } from '../../service/matrix.js';
import type { Answers } from '../../service/campaign.js';
import type { MatrixPageData } from './matrix-types.js';

/** The fault-matrix page: a clickable grid; a click opens that cell's run in the stepper. */
export async function matrixPage(data: MatrixPageData): Promise<string> {
  return htmlPage({ title: data.subject ? `retrysim · the fault matrix of ${data.subject.name}` : 'retrysim · the fault matrix', css: BASE_CSS + STEPPER_CSS + MATRIX_CSS, data, script: await clientScript('matrix') });
}

/**
 * Runs every cell, writes the page to `out`, and returns the six matrix
 * columns' numbers, so `retrysim matrix --html` prints the very runs the page shows.
 */
export async function writeMatrixPage(out: string, seed = 1): Promise<Record<string, Record<string, number>>> {
  const data = await matrixPageData(seed);
  writeFileSync(out, await matrixPage(data));
  return matrixRows(data);
}

/** `retrysim matrix --service PATH --html FILE`: runs every cell observed, writes the page, returns the cells it shows. */
export async function writeServiceMatrixPage(out: string, def: ServiceDefinition, module: string, seed = 1, answers?: Answers): Promise<ServiceMatrixCell[]> {
  const { data, cells } = await serviceMatrixPageData(def, module, seed, answers);
  writeFileSync(out, await matrixPage(data));
  return cells;
}
