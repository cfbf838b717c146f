import type { StepperData } from './stepper-types.js';

/** One cell of the matrix page: the real run's count, the documented expectation, and the run itself. */
export interface MatrixCellData {
  /** Reports the server holds for the one logical operation at the end of the run. */
  reports: number;
  /** The documented expectation (src/scenario/canonical.ts); absent for the kill column. */
  expected?: number;
  violations: string[];
  run: StepperData;
  /**
   * A cell with no checked-in scenario file (the kill column: its real side
   * is a real SIGKILL, run by `retrysim conformance`): the simulated run as a
   * scenario file, schedule included, so the page can save it and the run
   * can be replayed (`run.replay` names the file).
   */
  save?: { file: string; text: string };
}

/** Everything the matrix page draws. */
export interface MatrixPageData {
  seed: number;
  columns: string[];
  rows: string[];
  /** row name → column → cell */
  cells: Record<string, Record<string, MatrixCellData>>;
}
