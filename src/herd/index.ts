export { runHerd, WriteHistogram } from './model.js';
export type { HerdParams, HerdRunResult } from './model.js';
export { runGrid, meanSe, runGridInline, herdJsonRow, DEFAULT_STRATEGIES, DEFAULT_CLIENTS, DEFAULT_RUNS } from './grid.js';
export type { GridOptions, GridResult, CellResult } from './grid.js';
export { runSeed } from './task.js';
export { herdSvg } from './svg.js';
