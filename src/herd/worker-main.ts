/**
 * Body of a herd worker thread: runs the tasks the main thread posts and
 * posts back the results (typed arrays transferred, not copied).
 */
import { parentPort } from 'node:worker_threads';
import { runTask } from './task.js';
import type { HerdTask } from './task.js';

const port = parentPort;
if (port === null) throw new Error('herd worker: not running in a worker thread');
port.on('message', (task: HerdTask) => {
  runTask(task).then(
    (r) => port.postMessage({ ok: true, result: r }, [r.calls.buffer as ArrayBuffer, r.ms.buffer as ArrayBuffer, r.events.buffer as ArrayBuffer, r.hist.buffer as ArrayBuffer]),
    (e: unknown) => port.postMessage({ ok: false, id: task.id, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
  );
});
