import { Worker } from 'node:worker_threads';
import type { CampaignJob } from './job.js';
import { mergeScans, optionsOf, scanShare } from './job.js';
import { resultOf, type CampaignResult, type ScanResult } from './run.js';

/** How a pool thread is started: a bundled CommonJS file, or the tsx entry as a fallback. */
export interface WorkerEntry {
  file: string;
}

/**
 * Runs one claim at a time over N threads: each thread scans its share of
 * the claim's run indices (see `scanShare`), all stop above the lowest
 * failure any of them found, and the main thread then shrinks, minimises and
 * saves that failure. The verdict, the first failing run and the shrunk
 * counterexample are the same for every N (tested).
 */
export class CampaignPool {
  private readonly workers: Worker[] = [];

  constructor(entry: WorkerEntry | undefined, readonly size: number) {
    if (entry !== undefined) for (let i = 0; i < size; i++) this.workers.push(new Worker(entry.file));
  }

  /** Runs a generated-scenario job (random or PCT) over the pool; `onProgress` gets run counts as they complete. */
  async run(job: CampaignJob, clockMs: () => number, onProgress: (delta: number) => void): Promise<CampaignResult> {
    const best = new Int32Array(new SharedArrayBuffer(4));
    best[0] = 0x7fffffff;
    const scans = this.workers.length === 0
      ? [await scanShare(job, 0, 1, best, clockMs, progressDeltas(onProgress))]
      : await Promise.all(this.workers.map((w, i) => this.share(w, job, i, best, onProgress)));
    const merged: ScanResult = mergeScans(scans);
    return resultOf(optionsOf(job, clockMs), merged);
  }

  private share(w: Worker, job: CampaignJob, i: number, best: Int32Array, onProgress: (delta: number) => void): Promise<ScanResult> {
    return new Promise<ScanResult>((resolve, reject) => {
      const onMessage = (m: { type: 'progress'; done: number } | { type: 'scanned'; result: ScanResult } | { type: 'failed'; error: string }) => {
        if (m.type === 'progress') onProgress(m.done);
        else {
          w.off('message', onMessage);
          w.off('error', reject);
          if (m.type === 'scanned') resolve(m.result);
          else reject(new Error(`campaign worker failed: ${m.error}`));
        }
      };
      w.on('message', onMessage);
      w.on('error', reject);
      w.postMessage({ type: 'scan', job, worker: i, workers: this.workers.length, best: best.buffer });
    });
  }

  /** Ends the threads. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/** Turns a running total into deltas. */
function progressDeltas(onDelta: (d: number) => void): (done: number) => void {
  let last = 0;
  return (done) => {
    onDelta(done - last);
    last = done;
  };
}
