import type { ClockScope } from '../sim/fake-timers.js';
import type { Prng } from '../random/prng.js';
import type { Kernel } from '../sim/kernel.js';
import type { ProcessIdentity } from '../sim/process-identity.js';
import { ServiceError } from './errors.js';
import type { CrashKind } from './definition.js';
import type { ServiceHost } from './host.js';

/**
 * The code of one simulated process that runs outside every request: its
 * `memory()` at start-up, and the timers armed there (a TTL eviction sweep,
 * a heartbeat). In a simulation it reads what the process's requests read —
 * the kernel's time with the instance's epoch and clock skew, its identity —
 * and a seeded stream of its own, forked from the run's seed for this start
 * of this instance (`service/<instance>/memory/<restarts>`): a restarted
 * process draws a new boot id, and no stream the requests draw from moves,
 * so files found before replay as they did. Its timers fire on kernel time
 * with this scope entered, wait out a pause of the process, die at a kill
 * ({@link ServiceHost.killed}), and a callback that throws crashes the
 * process as an uncaught exception does. One per process start.
 */
export class ProcessScope implements ClockScope {
  readonly name: string;
  readonly identity: ProcessIdentity | undefined;
  readonly rng: Prng;

  /** The scope of `host`'s process as it starts now (after its restarts so far), on `kernel`'s run. */
  constructor(private readonly host: ServiceHost, kernel: Kernel) {
    // The trace's timer lines name it so: `s0/memory() setInterval callback`.
    this.name = `${host.name}/memory()`;
    this.identity = host.identity;
    this.rng = kernel.fork(`service/${host.name}/memory/${host.restarts}`);
  }

  /** @internal Whether this is a process of `h` (its timers die with `h`'s process). */
  ownedBy(h: ServiceHost): boolean {
    return this.host === h;
  }

  get offsetMs(): number {
    return this.host.faults.clockOffsetMs;
  }

  where(): string {
    return `${this.host.def.name}, memory() of ${this.host.name} or a timer it armed`;
  }

  /**
   * Never called: the scope is entered only while memory() or one of its
   * timer callbacks runs synchronously, so the clock never finds it idle.
   */
  park(): Promise<void> {
    return Promise.reject(new ServiceError(this.host.def.name, `the kernel clock found memory() of ${this.host.name} idle, which runs synchronously; this is a retrysim bug`));
  }

  frozenUntil(): number | undefined {
    return this.host.pausedUntil;
  }

  /** A timer callback armed in memory() threw (or its promise rejected): of which the process dies. */
  uncaught(error: unknown, kind: CrashKind = 'uncaught exception'): boolean {
    return this.host.clock !== undefined && this.host.crash(error, kind);
  }
}
