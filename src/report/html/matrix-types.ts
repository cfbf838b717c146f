import type { StepperData } from './stepper-types.js';

/** One cell of the matrix page: the real run's count, the documented expectation, and the run itself. */
export interface MatrixCellData {
  /** Reports the server holds for the one logical operation at the end of the run. */
  reports: number;
  /** The documented expectation (src/scenario/canonical.ts); absent for the kill column. */
  expected?: number;
  violations: string[];
  run: StepperData;
}

/** Everything the matrix page draws. */
export interface MatrixPageData {
  seed: number;
  columns: string[];
  rows: string[];
  /** row name → column → cell */
  cells: Record<string, Record<string, MatrixCellData>>;
}
