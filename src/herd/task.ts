import { Prng } from '../random/prng.js';
import type { StrategyName } from '../backoff/strategies.js';
import { herdQueue, runHerd, WriteHistogram } from './model.js';
import type { HerdParams } from './model.js';

/**
 * One unit of work of a grid: runs [runStart, runEnd) of one cell. Tasks are
 * what the worker threads receive; a task's result depends only on its
 * fields, so the grid's output is the same whatever thread ran it.
 */
export interface HerdTask {
  id: number;
  cell: number;
  strategy: StrategyName;
  clients: number;
  runStart: number;
  runEnd: number;
  /** The grid's one seed; each run's seed is forked from it. */
  seed: number;
  histogram: boolean;
  params?: Omit<HerdParams, 'clients' | 'strategy'>;
}

/** Per-run figures of a task (index i is run runStart + i) and the task's write-arrival histogram. */
export interface HerdTaskResult {
  id: number;
  calls: Float64Array;
  ms: Float64Array;
  events: Float64Array;
  hist: Uint32Array;
}

/**
 * The seed of run `run` of cell (strategy, clients): forked from the grid
 * seed by labels, so it depends on nothing else (not the worker count, not
 * the other cells, not the chunking).
 */
export function runSeed(seed: number, strategy: string, clients: number, run: number): number {
  return cellPrng(seed, strategy, clients).fork(`run/${run}`).seed;
}

function cellPrng(seed: number, strategy: string, clients: number): Prng {
  return new Prng(seed).fork(`herd/${strategy}/${clients}`);
}

/** Runs one task in the calling thread. */
export async function runTask(task: HerdTask): Promise<HerdTaskResult> {
  const n = task.runEnd - task.runStart;
  const calls = new Float64Array(n);
  const ms = new Float64Array(n);
  const events = new Float64Array(n);
  const hist = task.histogram ? new WriteHistogram() : undefined;
  const params: HerdParams = { ...task.params, clients: task.clients, strategy: task.strategy };
  const cell = cellPrng(task.seed, task.strategy, task.clients); // runSeed's first two forks, once per task
  const queue = herdQueue(params); // one queue for the task's runs
  for (let i = 0; i < n; i++) {
    const r = await runHerd(params, cell.fork(`run/${task.runStart + i}`).seed, hist, queue);
    calls[i] = r.calls;
    ms[i] = r.ms;
    events[i] = r.events;
  }
  return { id: task.id, calls, ms, events, hist: hist ? hist.toArray() : new Uint32Array(0) };
}
