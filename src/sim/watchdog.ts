import { Worker } from 'node:worker_threads';

/**
 * A last resort against code that never returns the main thread: a handler
 * in `for (;;) {}` (or a long synchronous computation). Nothing on the main
 * thread can run while it spins — no timer, no signal handler, no probe —
 * so a second thread watches a heartbeat in shared memory and, when the
 * main thread has been inside one piece of user code for `limitMs` without
 * a beat, writes one line naming it to stderr (a direct write: the main
 * thread cannot forward it) and ends the process with SIGKILL. A thread
 * cannot choose another thread's exit code, so the exit status is 137, not
 * 2; a busy wait on the kernel's clock (the common form on virtual time) is
 * caught in-process instead, with exit 2 (see ClockSpinError).
 *
 * The watchdog is host code and reads real time (its own thread's timers).
 */
export interface Watchdog {
  /** The main thread enters user code named `label` (one line). */
  enter(label: string): void;
  /** The main thread is back in retrysim's code. */
  leave(): void;
  /** Progress without leaving (a heartbeat). */
  beat(): void;
}

const LABEL_BYTES = 400;

const WORKER = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const i32 = new Int32Array(workerData.sab, 0, 3);
const bytes = new Uint8Array(workerData.sab, 12);
let seen = -1, since = 0;
setInterval(() => { // real-time: allowed (the watchdog's own thread)
  const beat = Atomics.load(i32, 0);
  const now = Date.now(); // real-time: allowed (the watchdog's own clock)
  if (beat !== seen || Atomics.load(i32, 1) === 0) { seen = beat; since = now; return; }
  if (now - since < workerData.limitMs) return;
  const n = Atomics.load(i32, 2);
  const label = Buffer.from(bytes.slice(0, n)).toString('utf8');
  writeSync(2, workerData.prefix + label + ' ran ' + Math.round((now - since) / 1000) + ' s without returning (a busy loop?); stopped (exit by SIGKILL: a stuck main thread cannot exit itself)\\n');
  process.kill(process.pid, 'SIGKILL');
}, Math.min(250, workerData.limitMs));
`;

/** Starts the watchdog thread (unref'd: it never keeps the process alive). */
export function startWatchdog(limitMs: number, prefix: string): Watchdog {
  const sab = new SharedArrayBuffer(12 + LABEL_BYTES);
  const i32 = new Int32Array(sab, 0, 3);
  const bytes = new Uint8Array(sab, 12);
  const enc = new TextEncoder();
  const w = new Worker(WORKER, { eval: true, workerData: { sab, limitMs, prefix } });
  w.unref();
  return {
    enter(label) {
      const r = enc.encodeInto(label, bytes);
      Atomics.store(i32, 2, r.written);
      Atomics.store(i32, 1, 1);
      Atomics.add(i32, 0, 1);
    },
    leave() {
      Atomics.store(i32, 1, 0);
      Atomics.add(i32, 0, 1);
    },
    beat() {
      Atomics.add(i32, 0, 1);
    },
  };
}

let armed: { limitMs: number; prefix: string } | undefined;
let dog: Watchdog | undefined;

/**
 * Arms the process's watchdog for user code run on the kernel's clock
 * (the CLI does; a library user or a test runner does not, unless it sets
 * `RETRYSIM_WATCHDOG_MS`). The thread starts at the first use.
 */
export function armWatchdog(limitMs = Number(process.env.RETRYSIM_WATCHDOG_MS ?? 10_000), prefix = 'retrysim: '): void {
  if (Number.isFinite(limitMs) && limitMs > 0) armed = { limitMs, prefix };
}

/** The armed watchdog, started on first call; undefined when not armed. */
export function watchdog(): Watchdog | undefined {
  if (armed === undefined) return undefined;
  dog ??= startWatchdog(armed.limitMs, armed.prefix);
  return dog;
}

if (process.env.RETRYSIM_WATCHDOG_MS !== undefined) armWatchdog();
