import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { StrategyName } from '../backoff/strategies.js';
import { WriteHistogram } from './model.js';
import type { HerdParams } from './model.js';
import { runTask } from './task.js';
import { herdWorkerCode } from './worker-code.js';
import type { HerdTask, HerdTaskResult } from './task.js';

/** The default grid of SPEC §2. */
export const DEFAULT_STRATEGIES: readonly StrategyName[] = ['none', 'expo', 'codex', 'equal', 'full', 'decorrelated'];
/** Client counts of the default grid. */
export const DEFAULT_CLIENTS: readonly number[] = [10, 50, 100];
/** Runs per cell by default (R of SPEC §2). */
export const DEFAULT_RUNS = 100;

/** Options of {@link runGrid}. */
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

/** What {@link runGrid} returns. */
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

/**
 * Runs the herd over strategies × clients, R runs per cell, and returns each
 * cell's means. Deterministic: the same options give the same numbers, to
 * the bit, whatever the number of workers.
 */
export async function runGrid(opts: GridOptions): Promise<GridResult> {
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
  const workers = chooseWorkers(opts.workers ?? 'auto', tasks, opts.runs);
  const results: HerdTaskResult[] = new Array(tasks.length);
  let runsDone = 0;
  const runsTotal = cells.length * opts.runs;
  const done = (r: HerdTaskResult): void => {
    results[r.id] = r;
    runsDone += r.calls.length;
    opts.onProgress?.(runsDone, runsTotal);
  };
  if (workers === 0) {
    for (const t of tasks) done(await runTask(t));
  } else {
    // Biggest tasks first (cost grows with the clients), handed out as
    // workers free up; results are put back in task order below.
    const order = [...tasks].sort((x, y) => y.clients - x.clients || x.id - y.id);
    await runOnWorkers(order, workers, done);
  }
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
  return { cells: out, events, workers };
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

function chooseWorkers(w: number | 'auto', tasks: HerdTask[], runs: number): number {
  if (w !== 'auto') {
    if (!(Number.isInteger(w) && w >= 0)) throw new RangeError(`workers must be an integer >= 0 or 'auto', got ${w}`);
    return Math.min(w, tasks.length);
  }
  // Starting a worker costs ~30 ms (plus a one-off esbuild bundle, cached):
  // only worth it for grids of real size.
  const clientRuns = tasks.reduce((s, t) => s + t.clients * (t.runEnd - t.runStart), 0);
  if (clientRuns < 20_000 || runs < 2) return 0;
  return Math.max(0, Math.min(availableParallelism() - 1, tasks.length - 1));
}

type WorkerMsg = { ok: true; result: HerdTaskResult } | { ok: false; id: number; error: string };

/** Tasks each worker holds at once, so it never idles while the main thread is busy computing. */
const IN_FLIGHT = 2;

/**
 * Runs `order` on the main thread plus `n` worker threads, each taking the
 * next task when it has room. The main thread computes too (on a 2-core
 * machine: main + 1 worker), yielding to the event loop between tasks so
 * worker results are collected and new tasks handed out.
 */
async function runOnWorkers(order: HerdTask[], n: number, done: (r: HerdTaskResult) => void): Promise<void> {
  const code = await herdWorkerCode();
  let next = 0;
  const take = (): HerdTask | undefined => (next < order.length ? order[next++] : undefined);
  const pool: Worker[] = [];
  let failure: Error | undefined;
  const workersDone: Promise<void>[] = [];
  if (code !== undefined) {
    for (let i = 0; i < n; i++) {
      const w = new Worker(code, { eval: true });
      pool.push(w);
      workersDone.push(
        new Promise<void>((resolve, reject) => {
          let inFlight = 0;
          const feed = (): void => {
            while (inFlight < IN_FLIGHT) {
              const t = take();
              if (t === undefined) break;
              inFlight++;
              w.postMessage(t);
            }
            if (inFlight === 0) resolve();
          };
          // Tasks posted now wait in the worker's port until its code has
          // loaded, so it starts computing the moment it is up — not when
          // this thread, busy computing, next gets round to its messages.
          feed();
          w.on('message', (m: WorkerMsg) => {
            if (!m.ok) return reject(new Error(`herd worker failed on task ${m.id}: ${m.error}`));
            inFlight--;
            done(m.result);
            feed();
          });
          w.on('error', reject);
          w.on('exit', (c) => (c !== 0 ? reject(new Error(`herd worker exited with code ${c}`)) : undefined));
        }).catch((e: unknown) => {
          failure ??= e instanceof Error ? e : new Error(String(e));
        }),
      );
    }
  }
  try {
    for (let t = take(); t !== undefined && failure === undefined; t = take()) {
      done(await runTask(t));
      await new Promise<void>((r) => setImmediate(r)); // real-time: allowed (lets worker messages in; reads no clock)
    }
    await Promise.all(workersDone);
    if (failure) throw failure;
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
}
