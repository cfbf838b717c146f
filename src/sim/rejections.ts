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

const pending: unknown[] = [];
/** Runs installed now (one at a time in practice; counted so that a nested install cannot disarm the outer one). */
let armed = 0;
/** Set from a run's release until the next host turn: rejections its last microtasks left are still its own, not Node's. */
let draining = false;
let listening = false;

function listen(): void {
  if (listening) return;
  listening = true;
  process.on('unhandledRejection', (reason) => {
    if (armed === 0 && !draining) throw reason; // not simulated code's: what Node does
    if (armed > 0) pending.push(reason);
    // (draining: left behind by a run that has ended; it concerns no request of any run)
  });
}

/** A simulated run starts: rejections from now on are collected (and any a previous run left are dropped). */
export function armRejections(): void {
  listen();
  if (armed === 0) pending.length = 0;
  armed++;
}

/** A simulated run ended: rejections its last microtasks leave, reported before the next host turn, are dropped. */
export function disarmRejections(): void {
  armed = Math.max(0, armed - 1);
  if (armed > 0) return;
  pending.length = 0;
  draining = true;
  realSetImmediate(() => { // real-time: allowed (see above)
    draining = false;
  });
}

/** The oldest unhandled rejection collected since the last take, if any (no host turn: see {@link probeRejection}). */
export function takeRejection(): { reason: unknown } | undefined {
  return pending.length === 0 ? undefined : { reason: pending.shift() };
}

/** Lets one host turn pass, so that Node reports what the code run so far left unhandled, then takes the oldest. */
export async function probeRejection(): Promise<{ reason: unknown } | undefined> {
  await hostTurn();
  return takeRejection();
}

/** Drops what was collected and not taken (a run's end: the rejections came after its last probe). */
export function dropRejections(): void {
  pending.length = 0;
}
