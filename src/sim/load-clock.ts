/**
 * A user's module is imported once per process (`check --service`,
 * `replay`): what its top level computes is shared by every run of a
 * campaign, while each run starts its processes at virtual time 0 on the
 * simulation's epoch. A value captured there (`const BOOT = Date.now()`)
 * read the machine's real clock: nondeterministic, and months away from the
 * 2026-01-01 its handlers see, so `Date.now() - BOOT` came out hugely
 * negative (−1.8e12 on the old 1970 clock). While the module loads, `Date`
 * reads the epoch itself, the instant every run starts at: the process
 * "booted" when the run began, and a handler's uptime is the run's virtual
 * time (plus its instance's skew).
 *
 * The instant stands still while the module loads (no simulated time passes
 * before a run), so a top level that busy-waits on the clock would never
 * get out: past {@link LOAD_READS_MAX} reads it fails to load, in one line.
 */

import { Prng } from '../random/prng.js';
import { seedNodeCrypto } from './seeded-node-crypto.js';

/**
 * The seed of the stream a module's top level draws from while it loads
 * (`Math.random()`, `crypto.randomUUID()`, node:crypto's random functions).
 * Fixed: a campaign's process and the fresh process that replays its
 * counterexample load the module alike, so an id made once at load (a
 * client's instance key, a process id a service answers with) is the same
 * value in both. Each load starts the stream afresh, whatever loaded before.
 */
export const LOAD_SEED = 0x10ad5eed;

/** The stream of the module loading now (undefined outside every load). */
let loadRng: Prng | undefined;
// Ranked after every simulation's own stream: code of a run, if any runs during a load, draws from its run's.
seedNodeCrypto(() => loadRng, 100);

/** Clock reads while a module loads before it is taken for a spin (the kernel clock's bound: src/sim/fake-timers.ts). */
export const LOAD_READS_MAX = 1_000_000;

/** The module's top level busy-waits on a clock that stands still while it loads. */
export class LoadSpinError extends Error {
  constructor() {
    super(`busy-waits on the clock while loading: read it ${LOAD_READS_MAX.toLocaleString('en-US')} times at the simulation's start, where time stands still until a run begins (wait inside a handler, on a timer or sim.sleep)`);
    this.name = 'LoadSpinError';
  }
}

/**
 * Runs `load` (an import) with `Date` reading `epochMs`: `Date.now()`,
 * `new Date()` and `Date()` give that instant; `new Date(x)`, `Date.parse`
 * and `Date.UTC` are the real ones. The real `Date` is back when the load
 * settles, thrown or not.
 */
export async function loadingAt<T>(epochMs: number, load: () => Promise<T>): Promise<T> {
  const Real = globalThis.Date;
  let reads = 0;
  const read = (): number => {
    if (++reads > LOAD_READS_MAX) throw new LoadSpinError();
    return epochMs;
  };
  function AtEpoch(this: unknown, ...args: unknown[]): unknown {
    if (new.target === undefined) return new Real(read()).toString();
    return Reflect.construct(Real, args.length === 0 ? [read()] : args, new.target);
  }
  Object.setPrototypeOf(AtEpoch, Real); // Date.parse, Date.UTC
  AtEpoch.prototype = Real.prototype;
  // A `Date.now` taken while the module loads is this function: the epoch while it loads, the clock of the
  // code running later (a run's virtual time) — not the load's instant forever, then a spin error.
  (AtEpoch as unknown as { now: () => number }).now = function now(): number {
    return globalThis.Date === (AtEpoch as unknown) ? read() : globalThis.Date.now(); // real-time: allowed (the clock of the code running now: a fake one in a run)
  };
  globalThis.Date = AtEpoch as unknown as DateConstructor;
  // Randomness too: until 2026-12 a top level's draws were the machine's, so a client made with one key per
  // instance (`key = crypto.randomUUID()` at load) sent another key in every process, and the counterexample
  // of its key reuse "did not reproduce in a fresh process" (exit 2, no invariant named).
  const realRandom = Math.random; // real-time: allowed (saved to restore; drawn only by a stand-in left installed after its load, outside every run)
  const prevRng = loadRng;
  const rng = new Prng(LOAD_SEED);
  // A `Math.random` taken while the module loads is this function: the load's stream while it loads, later the
  // `Math.random` of the code running then (a run's seeded one, or the machine's outside every run).
  const random = function random(): number {
    const M = Math.random; // real-time: allowed (the stand-in, not a draw)
    if (M === random) return loadRng === rng ? rng.next() : realRandom();
    return M();
  };
  loadRng = rng;
  Math.random = random; // real-time: allowed (installs the load's seeded stream)
  try {
    return await load();
  } finally {
    globalThis.Date = Real;
    if (Math.random === random) Math.random = realRandom; // real-time: allowed (restores the saved one)
    loadRng = prevRng;
  }
}

/**
 * `Date.now` and `performance.now` taken when a module loads — `const now =
 * performance.now.bind(performance)`, `const { now } = Date` — follow the
 * clock of whatever simulated code runs now. Each clock replaces the
 * globals (`Date`, `performance`) while its code runs, but such a copy held
 * the machine's function: a retry client whose time budget reads it saw no
 * time pass on virtual time, kept retrying, and failed `deadline` while
 * correct on a real machine. Installed once per process, at import (before
 * any user module loads), as own properties of the machine's `Date` and
 * `performance` that answer from the globals when something replaced them,
 * and from the machine otherwise. Host code that must read the machine's
 * clock while a simulation runs calls {@link machinePerformanceNow}.
 */
const machinePerformance = globalThis.performance;
const machinePerfNow = machinePerformance.now.bind(machinePerformance); // real-time: allowed (the machine's clock, for host code and outside every simulated scope)
const machineDate = globalThis.Date;
const machineDateNow = machineDate.now.bind(machineDate); // real-time: allowed (the machine's clock, outside every simulated scope)

/** The machine's `Date` constructor (whose `now` is the dispatcher below once installed). */
export const MachineDate = machineDate;

/** The machine's `Date.now()`, whatever clock the simulated code sees. */
export function machineDateNowMs(): number {
  return machineDateNow();
}

/** The machine's `performance.now()`, whatever clock the simulated code sees (a campaign's wall time, its time budget). */
export function machinePerformanceNow(): number {
  return machinePerfNow();
}

let capturedInstalled = false;

/** Installs the dispatchers (once). */
export function installCapturedClockDispatchers(): void {
  if (capturedInstalled) return;
  capturedInstalled = true;
  const perfNow = function now(): number {
    const p = globalThis.performance;
    return p !== machinePerformance && typeof p?.now === 'function' && p.now !== perfNow ? p.now() : machinePerfNow();
  };
  Object.defineProperty(machinePerformance, 'now', { value: perfNow, configurable: true, writable: true, enumerable: true });
  // A clock that replaced the global `Date` answers host code from the one it found, and that is this
  // machine `Date` (whose `now` is this function): asked back from inside, it answers the machine's
  // time. Until 2026-12 the two asked each other until the stack overflowed — `Date.now()` in simulated
  // code that ran outside its scope (a timer's promise continuation) threw a RangeError.
  let asking = false;
  const dateNow = function now(): number {
    const D = globalThis.Date;
    if (asking || D === machineDate || typeof D?.now !== 'function' || D.now === dateNow) return machineDateNow();
    asking = true;
    try {
      return D.now();
    } finally {
      asking = false;
    }
  };
  Object.defineProperty(machineDate, 'now', { value: dateNow, configurable: true, writable: true, enumerable: false });
}

installCapturedClockDispatchers();
