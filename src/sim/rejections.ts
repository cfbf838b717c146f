/**
 * Promise rejections that simulated code (a user's service or hosted app)
 * leaves unhandled. A real Node process (`--unhandled-rejections=throw`, the
 * default since Node 15) dies on one; in a simulation it is collected here
 * instead of ending retrysim's process, and the host takes it at its next
 * probe (src/service/host.ts, src/app/serve-request.ts) and models what
 * Node does: the process of that instance crashes.
 *
 * Node reports a rejection only once its microtasks have drained, so a probe
 * lets one host turn pass first ({@link hostTurn}). Outside a simulated run
 * nothing is collected: the rejection is thrown again, which is what Node
 * does without a listener.
 */
import { hostTurn } from './host-turns.js';

// Captured at load, before any fake clock swaps the global: orders work after a run's microtasks; reads no time.
const realSetImmediate = globalThis.setImmediate; // real-time: allowed (microtask drain, no time read)

/**
 * One collector per process, kept on the global object rather than in this
 * module: the module can be loaded more than once in a process (a test
 * runner sharing one process between files, vitest's `isolate: false`, or
 * two copies of retrysim), and each copy's listener would otherwise see
 * every rejection — the first one registered, not armed, throws it again
 * and Node calls no later listener, so the armed copy's run never learns of
 * its crash.
 */
interface Collector {
  pending: unknown[];
  /** Runs installed now (one at a time in practice; counted so that a nested install cannot disarm the outer one). */
  armed: number;
  /** Set from a run's release until the next host turn: rejections its last microtasks left are still its own, not Node's. */
  draining: boolean;
  listener: (reason: unknown) => void;
}

const KEY = Symbol.for('retrysim.unhandled-rejections');
const c: Collector = ((globalThis as Record<symbol, Collector | undefined>)[KEY] ??= {
  pending: [],
  armed: 0,
  draining: false,
  listener: (reason: unknown) => {
    if (c.armed === 0 && !c.draining) throw reason; // not simulated code's: what Node does
    if (c.armed > 0) c.pending.push(reason);
    // (draining: left behind by a run that has ended; it concerns no request of any run)
  },
});

function listen(): void {
  if (!process.listeners('unhandledRejection').includes(c.listener)) process.on('unhandledRejection', c.listener);
}

/** A simulated run starts: rejections from now on are collected (and any a previous run left are dropped). */
export function armRejections(): void {
  listen();
  if (c.armed === 0) c.pending.length = 0;
  c.armed++;
}

/** A simulated run ended: rejections its last microtasks leave, reported before the next host turn, are dropped. */
export function disarmRejections(): void {
  c.armed = Math.max(0, c.armed - 1);
  if (c.armed > 0) return;
  c.pending.length = 0;
  c.draining = true;
  realSetImmediate(() => { // real-time: allowed (see above)
    c.draining = false;
  });
}

/** The oldest unhandled rejection collected since the last take, if any (no host turn: see {@link probeRejection}). */
export function takeRejection(): { reason: unknown } | undefined {
  return c.pending.length === 0 ? undefined : { reason: c.pending.shift() };
}

/** Lets one host turn pass, so that Node reports what the code run so far left unhandled, then takes the oldest. */
export async function probeRejection(): Promise<{ reason: unknown } | undefined> {
  await hostTurn();
  return takeRejection();
}

/** Drops what was collected and not taken (a run's end: the rejections came after its last probe). */
export function dropRejections(): void {
  c.pending.length = 0;
}
