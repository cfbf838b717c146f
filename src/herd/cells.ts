import type { StrategyName } from '../backoff/strategies.js';
import { WriteHistogram } from './model.js';
import type { HerdParams } from './model.js';
import { runTask } from './task.js';
import type { HerdTask, HerdTaskResult } from './task.js';

/**
 * The thread-free half of the grid runner: how a grid is cut into tasks and
 * how task results become cells. `runGrid` (grid.ts) hands the tasks to
 * worker threads; the herd explorer page runs them in the browser with
 * {@link runGridInline}. Both aggregate here, so a page and the CLI compute
 * each cell by the same code from the same runs.
 */

/** The default grid of SPEC §2. */
export const DEFAULT_STRATEGIES: readonly StrategyName[] = ['none', 'expo', 'codex', 'equal', 'full', 'decorrelated'];
/** Client counts of the default grid. */
export const DEFAULT_CLIENTS: readonly number[] = [10, 50, 100];
/** Runs per cell by default (R of SPEC §2). */
export const DEFAULT_RUNS = 100;

/** Options of `runGrid`. */
export interface GridOptions {
  strategies: readonly StrategyName[];
  clients: readonly number[];
  /** Runs per cell (R). */
  runs: number;
  /** The one seed; every run's seed is forked from it by (strategy, clients, run). */
  seed: number;
  /**
   * Worker threads besides the main thread (which computes too): 0 runs
   * everything in this thread; 'auto' (default) uses cores − 1 when the grid
   * is big enough to pay for starting them (~30 ms each). The output does
   * not depend on this.
   */
  workers?: number | 'auto';
  /** Collect write-arrival histograms (for the SVG). Default false. */
  histograms?: boolean;
  /** Model parameters other than clients and strategy (defaults: SPEC §2). */
  params?: Omit<HerdParams, 'clients' | 'strategy'>;
  /** Called after each finished chunk with the runs done so far. */
  onProgress?: (runsDone: number, runsTotal: number) => void;
}

/** One cell: means over R runs with their standard errors (sample sd / √R). */
export interface CellResult {
  strategy: StrategyName;
  clients: number;
  runs: number;
  /** Mean write requests per run. */
  calls: number;
  callsSe: number;
  /** Mean completion time per run (last successful write's reply), ms. */
  ms: number;
  msSe: number;
  /** Kernel events of all R runs together. */
  events: number;
  /** Write arrivals at the server over all R runs, 1 ms bins (empty unless histograms were asked for). */
  hist: Uint32Array;
}

/** What `runGrid` returns. */
export interface GridResult {
  cells: CellResult[];
  /** Events of the whole grid. */
  events: number;
  /** Worker threads actually used (0 = this thread). */
  workers: number;
}

/** Runs per task: fixed (not derived from the worker count), so chunking never changes a result. */
const CHUNK_RUNS = 25;

/** Mean and standard error, summed in run order so the bits never depend on scheduling. */
export function meanSe(xs: ArrayLike<number>): { mean: number; se: number } {
  const n = xs.length;
  if (n === 0) return { mean: NaN, se: NaN };
  let sum = 0;
  for (let i = 0; i < n; i++) sum += xs[i]!;
  const mean = sum / n;
  if (n < 2) return { mean, se: 0 };
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (xs[i]! - mean) ** 2;
  return { mean, se: Math.sqrt(ss / (n - 1) / n) };
}

/** A grid's cells (strategy-major) and its tasks, each a chunk of one cell's runs. */
export function gridTasks(opts: GridOptions): { cells: Array<{ strategy: StrategyName; clients: number }>; tasks: HerdTask[] } {
  const tasks: HerdTask[] = [];
  const cells = opts.strategies.flatMap((strategy) => opts.clients.map((clients) => ({ strategy, clients })));
  cells.forEach(({ strategy, clients }, cell) => {
    for (let runStart = 0; runStart < opts.runs; runStart += CHUNK_RUNS) {
      tasks.push({
        id: tasks.length,
        cell,
        strategy,
        clients,
        runStart,
        runEnd: Math.min(opts.runs, runStart + CHUNK_RUNS),
        seed: opts.seed,
        histogram: opts.histograms ?? false,
        ...(opts.params ? { params: opts.params } : {}),
      });
    }
  });
  return { cells, tasks };
}

/** Turns every task's result (indexed by task id) into the grid's cells. */
export function aggregateCells(opts: GridOptions, grid: ReturnType<typeof gridTasks>, results: readonly HerdTaskResult[]): { cells: CellResult[]; events: number } {
  const { cells, tasks } = grid;
  let events = 0;
  const out: CellResult[] = cells.map(({ strategy, clients }, cell) => {
    const mine = results.filter((_, i) => tasks[i]!.cell === cell); // task order = run order
    const calls = concat(mine.map((r) => r.calls));
    const ms = concat(mine.map((r) => r.ms));
    const cellEvents = mine.reduce((s, r) => s + r.events.reduce((a, b) => a + b, 0), 0);
    events += cellEvents;
    const hist = new WriteHistogram(1);
    for (const r of mine) hist.merge(r.hist);
    const c = meanSe(calls);
    const m = meanSe(ms);
    return { strategy, clients, runs: opts.runs, calls: c.mean, callsSe: c.se, ms: m.mean, msSe: m.se, events: cellEvents, hist: hist.toArray() };
  });
  return { cells: out, events };
}

/**
 * Runs a grid in the calling thread, task after task (what `runGrid` does
 * with 0 workers). No Node APIs: the herd explorer page runs this in the
 * browser. `between` is awaited after each task (a page lets itself paint).
 */
export async function runGridInline(opts: GridOptions, between?: () => Promise<void>): Promise<GridResult> {
  const grid = gridTasks(opts);
  const results: HerdTaskResult[] = [];
  let runsDone = 0;
  for (const t of grid.tasks) {
    const r = await runTask(t);
    results[r.id] = r;
    runsDone += r.calls.length;
    opts.onProgress?.(runsDone, grid.cells.length * opts.runs);
    if (between) await between();
  }
  return { ...aggregateCells(opts, grid, results), workers: 0 };
}

function concat(parts: Float64Array[]): Float64Array {
  const out = new Float64Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** A cell as `retrysim herd --json` prints it (figures rounded to 0.001); the herd page shows the same object. */
export function herdJsonRow(c: CellResult): { strategy: StrategyName; clients: number; runs: number; calls: number; callsSe: number; ms: number; msSe: number; events: number } {
  return { strategy: c.strategy, clients: c.clients, runs: c.runs, calls: round(c.calls), callsSe: round(c.callsSe), ms: round(c.ms), msSe: round(c.msSe), events: c.events };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
