/**
 * Worker-thread side of `retrysim check --workers N`: scans its share of one
 * claim's run indices at a time, as told, and posts progress and the scan
 * back. Shrinking happens in the main thread once every share is in, so the
 * counterexample does not depend on which thread found the failure.
 */
import { parentPort } from 'node:worker_threads';
import { scanShare, type CampaignJob } from '../campaign/job.js';

/** A share to scan: the job, which part of it, and the job's shared lowest-failure cell. */
export interface ScanMessage {
  type: 'scan';
  job: CampaignJob;
  worker: number;
  workers: number;
  best: SharedArrayBuffer;
}

const clock = () => performance.now();
parentPort!.on('message', (m: ScanMessage) => {
  let last = 0;
  scanShare(m.job, m.worker, m.workers, new Int32Array(m.best), clock, (done) => {
    // Throttled: a message per scenario would cost more than the scenario.
    if (done - last >= 100) {
      parentPort!.postMessage({ type: 'progress', done: done - last });
      last = done;
    }
  }).then(
    (result) => parentPort!.postMessage({ type: 'scanned', result, progress: 0 }),
    (e: unknown) => parentPort!.postMessage({ type: 'failed', error: e instanceof Error ? e.stack ?? e.message : String(e) }),
  );
});
