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
  /** A user's service matrix: whether the cell is judged (a stable key) and met its goal (no second effect, no invariant broken). */
  judged?: boolean;
  ok?: boolean;
}

/** Whose matrix it is, when it is a user's service or app (`retrysim matrix --service PATH`) and not the built-in tracker's. */
export interface MatrixSubject {
  kind: 'service' | 'app';
  name: string;
  module: string;
  /** `--service` or `--app`, for the replay lines. */
  flag: string;
  /** The service's `effects.noun`, and its plural. */
  noun: string;
  nouns: string;
  /** The rows (key sources) whose cells are judged. */
  judged: string[];
}

/** Everything the matrix page draws. */
export interface MatrixPageData {
  seed: number;
  subject?: MatrixSubject;
  columns: string[];
  rows: string[];
  /** row name → column → cell */
  cells: Record<string, Record<string, MatrixCellData>>;
}
