import { writeFileSync } from 'node:fs';
import { clientScript } from './bundle.js';
import { htmlPage } from './page.js';
import { BASE_CSS, MATRIX_CSS, STEPPER_CSS } from './styles.js';
import { matrixPageData, matrixRows } from './matrix-data.js';
import type { MatrixPageData } from './matrix-types.js';

/** The fault-matrix page: a clickable grid; a click opens that cell's run in the stepper. */
export async function matrixPage(data: MatrixPageData): Promise<string> {
  return htmlPage({ title: 'retrysim · the fault matrix', css: BASE_CSS + STEPPER_CSS + MATRIX_CSS, data, script: await clientScript('matrix') });
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
