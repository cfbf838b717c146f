import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import { runTask } from './task.js';
import { herdWorkerCode } from './worker-code.js';
import type { HerdTask, HerdTaskResult } from './task.js';
import { aggregateCells, gridTasks, type GridOptions, type GridResult } from './cells.js';

// The grid's pure half (tasks, aggregation, defaults) lives in cells.ts so the
// herd explorer page can run it in a browser; these names stay importable here.
export { DEFAULT_CLIENTS, DEFAULT_RUNS, DEFAULT_STRATEGIES, meanSe, runGridInline, herdJsonRow } from './cells.js';
export type { CellResult, GridOptions, GridResult } from './cells.js';

/**
 * Runs the herd over strategies × clients, R runs per cell, and returns each
 * cell's means. Deterministic: the same options give the same numbers, to
 * the bit, whatever the number of workers.
 */
export async function runGrid(opts: GridOptions): Promise<GridResult> {
  const grid = gridTasks(opts);
  const { cells, tasks } = grid;
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
  return { ...aggregateCells(opts, grid, results), workers };
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
