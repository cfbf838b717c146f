import type { Deferred, StepEnv } from './env.js';
import type { Footprint } from '../sim/footprint.js';
import { CrashFault, fire, resolveFaults, type FaultOptions } from './faults.js';
import { assertLease, DEFAULT_CLIENT_TIMEOUT_MS, DEFAULT_LEASE_MS, leaseProblem } from './lease.js';
import type { TrackerRequest, TrackerResponse } from './messages.js';
import type { Store } from './store.js';
import type { StrategyContext, Variant, WriteStrategy } from './strategy.js';
import { serveTracker } from './handler.js';
import { createStrategy, usesLease } from './variants.js';
import { headerValueProblem } from './validate.js';

/** Options of a {@link TrackerInstance}. */
export interface TrackerInstanceOptions {
  /** Which write strategy this instance runs. */
  variant: Variant;
  /** The database; several instances may share one Store. */
  db: Store;
  /** Lease of an in-progress key (key_atomic variants). Default 5000. */
  leaseMs?: number;
  /** The clients' timeout, used only for the lease check. Default 2000. */
  clientTimeoutMs?: number;
  /** Declared upper bound of processing time, for the lease check. Default: `faults.slowMs`. */
  maxProcessingMs?: number;
  /** Fault knobs; omitted knobs mean no fault. */
  faults?: Partial<FaultOptions>;
  /** Name for messages and the `x-instance` response header. Default `'tracker'`. */
  name?: string;
  /**
   * Skip the lease check, to build a deliberately unsafe instance (SPEC §4
   * scenario 6: lease 0.5 s, processing 0.8 s). Simulation only.
   */
  allowUnsafeLease?: boolean;
  /** memory_singleflight: replay window of completed results, ms. Default 24 h. */
  completedTtlMs?: number;
}

/**
 * One tracker server process for real mode (node:http, `retrysim serve`,
 * the flakiness lab); the simulation hosts the same strategies through the
 * service API instead (service.ts). `handle` serves one request; the env passed
 * with it supplies time and interleaving. Kill is done from outside: the
 * caller simply never resumes the in-flight requests (it must not reject
 * their pending steps, or catch blocks would run as if the process lived),
 * then calls {@link TrackerInstance.restart}.
 *
 * @example
 * const store = openStore();
 * const a = new TrackerInstance({ variant: 'key_atomic', db: store, faults: { slowMs: 300 } });
 * const res = await a.handle({ method: 'POST', path: '/reports', headers: { 'idempotency-key': 'k' }, body }, env);
 */
export class TrackerInstance {
  readonly name: string;
  readonly variant: Variant;
  readonly store: Store;
  readonly leaseMs: number;
  readonly clientTimeoutMs: number;
  /** Live fault state: counters decrement as they fire; may be re-armed by assignment. */
  readonly faults: FaultOptions;
  /** Number of restarts so far. */
  restarts = 0;
  private readonly strategy: WriteStrategy;
  private readonly allowUnsafeLease: boolean;
  private readonly maxProcessingMs: number;

  constructor(opts: TrackerInstanceOptions) {
    this.name = opts.name ?? 'tracker';
    // The name is sent as a header on every answer: a value node refuses to
    // write would turn every answer into a failure after its commit.
    const nameProblem = headerValueProblem(this.name);
    if (nameProblem !== null) throw new Error(`instance name ${JSON.stringify(this.name)} ${nameProblem}`);
    this.variant = opts.variant;
    this.store = opts.db;
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.clientTimeoutMs = opts.clientTimeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS;
    this.faults = resolveFaults(opts.faults);
    this.strategy = createStrategy(opts.variant, { completedTtlMs: opts.completedTtlMs });
    this.allowUnsafeLease = opts.allowUnsafeLease ?? false;
    this.maxProcessingMs = opts.maxProcessingMs ?? 0;
    const pause = this.faults.pause;
    if (pause && !this.strategy.stepLabels.includes(pause.atStep)) {
      throw new Error(
        `${this.name}: pause.atStep '${pause.atStep}' is not a step of ${opts.variant} ` +
          `(steps: ${this.strategy.stepLabels.join(', ')}); the fault would never fire`,
      );
    }
    if (usesLease(opts.variant) && !opts.allowUnsafeLease) {
      const processingMs = Math.max(this.faults.slowMs, opts.maxProcessingMs ?? 0);
      try {
        assertLease({ leaseMs: this.leaseMs, clientTimeoutMs: this.clientTimeoutMs, processingMs });
      } catch (e) {
        throw new Error(`${this.name} (${opts.variant}): ${(e as Error).message}`);
      }
    }
  }

  /**
   * Why re-arming the slow-processing fault at `slowMs` would break the
   * lease rule this instance was built under, or null when it would not
   * (always null for variants without a lease, or with allowUnsafeLease).
   * Whoever changes `faults.slowMs` on a live instance asks this first — the
   * constructor's check only saw the value it was given.
   */
  slowMsProblem(slowMs: number): string | null {
    if (!usesLease(this.variant) || this.allowUnsafeLease) return null;
    const problem = leaseProblem({ leaseMs: this.leaseMs, clientTimeoutMs: this.clientTimeoutMs, processingMs: Math.max(slowMs, this.maxProcessingMs) });
    return problem === null ? null : `${this.name} (${this.variant}): ${problem}`;
  }

  /** Serves one request. Never rejects for expected failures; those are responses. */
  async handle(req: TrackerRequest, env: StepEnv): Promise<TrackerResponse> {
    let res = await serveTracker(req, this.variant, this.strategy, this.context(env));
    // Only a fresh commit can be "lost after commit"; replays and errors committed nothing.
    if (res.status === 201 && !res.replay && fire(this.faults, 'loseResponseAfterCommit')) res = { ...res, dropConnection: true };
    res.headers['x-instance'] = this.name;
    return res;
  }

  /** Reports in the database now (the simulated network traces their changes). */
  effectCount(): number {
    return this.store.countReports();
  }

  /** A process restart: in-process memory (singleflight maps) is lost; SQLite data is kept. */
  restart(): void {
    this.strategy.restart();
    this.restarts += 1;
  }

  private context(env: StepEnv): StrategyContext {
    return new InstanceContext(this.store, env, this.leaseMs, this.faults);
  }
}

/**
 * The {@link StrategyContext} of one request. A class rather than an object
 * of closures: a request builds one, and closures cost an allocation each
 * (plus a `name` property definition each under the tsx loader).
 */
class InstanceContext implements StrategyContext {
  /** This request stalled in a `thenCrash` pause: it crashes at the crash point. */
  private crashAfterPause = false;
  /** The current phase's footprint, for the sleeps inside it. */
  private phase: Footprint | undefined;

  constructor(
    readonly store: Store,
    readonly env: StepEnv,
    readonly leaseMs: number,
    private readonly faults: FaultOptions,
  ) {}

  nowMs(): number {
    return this.env.now() + this.faults.clockOffsetMs;
  }

  async step(label: string, footprint?: Footprint): Promise<void> {
    // While a fault counter of this instance is armed, whichever request
    // reaches it first takes it: every phase may race for it, so none is
    // declared independent. Counters only count down, so once they are all
    // zero they stay zero and the strategy's own declaration is exact.
    const f = this.faults;
    const armed = f.crashMidRequest > 0 || f.loseResponseAfterCommit > 0 || (f.pause !== undefined && f.pause.count > 0);
    this.phase = armed ? undefined : footprint;
    await this.env.step(label, this.phase);
    const p = this.faults.pause;
    if (p && p.count > 0 && p.atStep === label) {
      p.count -= 1;
      if (p.thenCrash) this.crashAfterPause = true;
      await this.env.sleep(p.ms, this.phase);
    }
  }

  async process(): Promise<void> {
    // The rest of the phase runs after the sleep: it touches what the phase declared.
    if (this.faults.slowMs > 0) await this.env.sleep(this.faults.slowMs, this.phase);
  }

  defer<T>(): Deferred<T> {
    return this.env.defer<T>();
  }

  crashPoint(point: string): void {
    if (this.crashAfterPause) {
      this.crashAfterPause = false;
      throw new CrashFault(`${point} (after a pause)`);
    }
    if (fire(this.faults, 'crashMidRequest')) throw new CrashFault(point);
  }
}
