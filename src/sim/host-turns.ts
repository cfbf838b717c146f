/**
 * Host turns: a hosted Node app (src/app/) runs framework code that moves
 * through `process.nextTick` and stream callbacks, so its request task can
 * only tell that the app has gone quiet by letting one macrotask turn pass.
 * The service runner's foreign-await check (src/service/run.ts) treats any
 * macrotask that runs before the simulation finishes as a handler waiting
 * on something outside the simulation; a turn taken here is the one
 * exception it knows of, so it waits for the turn instead of failing.
 */

// Captured at load, before any fake clock swaps the global: the turn only
// orders host work after the pending microtasks; it reads no time.
const realSetImmediate = globalThis.setImmediate; // real-time: allowed (microtask drain, no time read)

let pending = 0;

/** Resolves after one macrotask turn, once every pending nextTick and microtask has run. */
export function hostTurn(): Promise<void> {
  pending++;
  return new Promise((resolve) => {
    realSetImmediate(() => { // real-time: allowed (see above)
      pending--;
      resolve();
    });
  });
}

/** Whether some hosted app is waiting for its turn right now. */
export function hostTurnPending(): boolean {
  return pending > 0;
}

/**
 * Waits for real host work the run itself started and nothing else can
 * interleave with (a hosted app's module loaded afresh for a simulated
 * process, src/app/per-process.ts): the foreign-await check treats it as a
 * host turn, not as a handler waiting outside the simulation.
 */
export async function hostWait<T>(work: () => Promise<T>): Promise<T> {
  pending++;
  try {
    return await work();
  } finally {
    pending--;
  }
}
