import nodeOs from 'node:os';
import { syncBuiltinESMExports } from 'node:module';

/**
 * Who a simulated process is: what `os.hostname()`, `process.pid` and
 * `process.ppid` read while its code runs.
 *
 * A user's service or hosted app runs as several instances (`s0`, `s1`, …)
 * inside one Node process, so without this they all read the same pid and
 * hostname. Real replicas do not, and code that names a lock or lease owner
 * `${os.hostname()}:${process.pid}` (hand-written locks, job queues, lease
 * tables) is correct in production: every instance then took every other's
 * lock for its own, and a correct service failed exactly-one (a false alarm).
 *
 * The model (deterministic, no real value leaks into a trace):
 * * `hostname` is the instance's name (`s0`, `s1`, …), stable across its
 *   restarts, as a machine's or a VM's is. Not derived from the real
 *   hostname: a run must replay the same on another machine.
 * * `pid` is new at each start of the process, as under systemd or on a VM
 *   where a restarted service gets a fresh pid: instance `sN` starts as
 *   `10000 × (N + 1)` and each restart after a kill or crash takes the next
 *   (`s0`: 10000, 10001, …; `s1`: 20000, …; wrapping within its block of
 *   10,000 as Linux reuses pids). Not a container's pid 1 at every start:
 *   then a restarted process would take the lock its dead predecessor left
 *   for its own (same hostname, same pid) and run on inside it, which no
 *   process manager outside containers gives, and a bug that needs it would
 *   be hidden everywhere else.
 * * `ppid` is 1: the service manager (systemd, init) that restarts it.
 *
 * The three are replaced once per Node process, when this module is first
 * imported (before any user module loads, as node:crypto's dispatchers:
 * see seeded-node-crypto.ts), by dispatchers that ask each registered source
 * for the identity of the simulated code running now and answer the real
 * value when none does (retrysim's own code, the CLI, a test's setup; the
 * watchdog's `process.kill(process.pid)` kills the real process). Once, not
 * per run: redefining a global costs tens of µs (see KernelClock.install),
 * and `syncBuiltinESMExports` (which `import { hostname } from 'node:os'`
 * needs) ~30 µs; outside every scope a dispatcher is the real value.
 * `process.pid` is a read-only data property: it becomes a getter (an
 * assignment still fails in strict code, as on the real one).
 */
export interface ProcessIdentity {
  /** What `os.hostname()` answers: the instance's name. */
  readonly hostname: string;
  /** What `process.pid` reads: new at each start of the process. */
  readonly pid: number;
  /** What `process.ppid` reads: the service manager's, 1. */
  readonly ppid: number;
  /** Kernel time (ms) at which this start of the process began: `process.uptime()` counts from it. */
  readonly startedAtMs?: number;
}

/** The first pid of instance `s0`; instance `sN`'s pids are the block of this size starting at `PID_BLOCK × (N + 1)`. */
const PID_BLOCK = 10_000;

/**
 * The identity of instance `instance` (`s0`, `s1`, …) at its `restarts`-th
 * restart (0: as first started). A name of another shape (none in a
 * simulation today) gets a block from a hash of the name.
 */
export function simulatedIdentity(instance: string, restarts: number, startedAtMs = 0): ProcessIdentity {
  const m = /^s(\d+)$/.exec(instance);
  const index = m !== null ? Number(m[1]) : hashName(instance) % 400;
  return { hostname: instance, pid: PID_BLOCK * (index + 1) + (restarts % PID_BLOCK), ppid: 1, startedAtMs };
}

function hashName(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Answers the identity of the simulated process whose code runs now, or undefined when none of its code runs. */
export type IdentitySource = () => ProcessIdentity | undefined;

const sources: Array<{ source: IdentitySource; rank: number }> = [];

/**
 * Makes `source` one of the places the dispatchers ask. Lower ranks are
 * asked first (a hosted app's instance clock, -1, is entered inside its
 * request's kernel-clock scope, 0; both answer the same process).
 */
export function identifyProcessesBy(source: IdentitySource, rank = 0): void {
  if (sources.some((s) => s.source === source)) return;
  sources.push({ source, rank });
  sources.sort((a, b) => a.rank - b.rank);
}

/** The identity of the simulated process running now, if any. */
export function currentIdentity(): ProcessIdentity | undefined {
  for (const s of sources) {
    const id = s.source();
    if (id !== undefined) return id;
  }
  return undefined;
}

let installed = false;

/** Puts the dispatchers on `process` and node:os (once per Node process). */
function installDispatchers(): void {
  if (installed) return;
  installed = true;
  const realPid = process.pid;
  let realPpid = process.ppid;
  const realHostname = nodeOs.hostname;
  const pidOwn = Object.getOwnPropertyDescriptor(process, 'pid');
  const ppidOwn = Object.getOwnPropertyDescriptor(process, 'ppid');
  Object.defineProperty(process, 'pid', {
    get: () => currentIdentity()?.pid ?? realPid,
    enumerable: pidOwn?.enumerable ?? true,
    configurable: true,
  });
  Object.defineProperty(process, 'ppid', {
    get: () => currentIdentity()?.ppid ?? realPpid,
    // Writable on Node: an assignment changes what host code reads.
    set: (v: number) => void (realPpid = v),
    enumerable: ppidOwn?.enumerable ?? true,
    configurable: true,
  });
  const hostname = function hostname(): string {
    return currentIdentity()?.hostname ?? realHostname();
  };
  // Node's own answers its name when coerced (`${os.hostname}`, a deprecated use): so does this one.
  Object.defineProperty(hostname, Symbol.toPrimitive, { value: () => hostname(), configurable: true });
  (nodeOs as unknown as Record<string, unknown>).hostname = hostname;
  // ESM `import { hostname } from 'node:os'` bindings follow the module object only after a sync.
  syncBuiltinESMExports();
}

// At import, not at the first run: a user's module loaded after this one
// finds the dispatchers however it takes them (`const { hostname } =
// require('os')` copies the function at load).
installDispatchers();
