/**
 * Worker-thread side of `retrysim check --workers N`: runs the campaign jobs
 * it is given, one after another, and posts progress and results back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runJob, type CampaignJob } from '../campaign/job.js';

const jobs = workerData as CampaignJob[];
const clock = () => performance.now();
for (const job of jobs) {
  let last = 0;
  const result = await runJob(job, clock, (done) => {
    // Throttled: a message per scenario would cost more than the scenario.
    if (done - last >= 50) {
      last = done;
      parentPort!.postMessage({ type: 'progress', claimId: job.claimId, done });
    }
  });
  parentPort!.postMessage({ type: 'result', result });
}
