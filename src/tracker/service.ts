import type { ServiceDefinition, ServiceSim } from '../service/definition.js';
import { ownService } from '../service/own.js';
import type { Footprint } from '../sim/footprint.js';
import type { Deferred } from './env.js';
import { serveTracker } from './handler.js';
import { DEFAULT_LEASE_MS, leaseProblem } from './lease.js';
import type { TrackerRequest } from './messages.js';
import { storeOn, TRACKER_SCHEMA, type Store } from './store.js';
import type { StrategyContext, Variant, WriteStrategy } from './strategy.js';
import { CRASH_POINTS, createStrategy, STEP_LABELS, usesLease } from './variants.js';

/** One tracker process's in-process memory: its write strategy (memory_singleflight keeps its maps there). */
export interface TrackerMemory {
  strategy: WriteStrategy;
}

/** The deployment of a built-in variant: what a scenario's `service` fixes besides the variant. */
export interface TrackerDeployment {
  variant: Variant;
  /** Lease of an in-progress key (key_atomic variants); also how long recovery waits. Default 5000. */
  leaseMs?: number;
  /** memory_singleflight: how long a completed result is replayable. */
  completedTtlMs?: number;
}

/** The same function for every variant, so every variant's runs share one cached database (see simDatabase). */
function setup(db: Parameters<ServiceDefinition['setup']>[0]): void {
  db.exec(TRACKER_SCHEMA);
}

const idsOf = (db: Parameters<ServiceDefinition['setup']>[0]) => storeOn(db);

/**
 * The built-in bug tracker (SPEC §3) as a {@link ServiceDefinition}: the
 * proof that the service API is enough, and the only way the simulation
 * hosts and judges it (docs/design.md invariant 7: no back door). Each variant is
 * one definition; its write strategy runs behind `handle` on `sim.db`, its
 * phases are `sim.step`s that declare their footprints, its crash point is
 * a `sim.crashPoint`, memory_singleflight's maps live in `memory()` (lost on
 * restart), and the checkers count reports through `effects`.
 *
 * @example
 * const def = trackerService({ variant: 'key_atomic', leaseMs: 5000 });
 * const run = await runServiceScenario(scenario, def);
 */
export function trackerService(d: TrackerDeployment): ServiceDefinition<TrackerMemory> {
  const { variant } = d;
  const leaseMs = d.leaseMs ?? DEFAULT_LEASE_MS;
  // Our own code: its steps skip the unhandled-rejection probe (src/service/own.ts).
  return ownService({
    name: variant,
    tables: ['idempotency_keys', 'reports'],
    setup,
    steps: STEP_LABELS[variant],
    crashPoints: [CRASH_POINTS[variant]],
    // Where key_atomic's claim takes an expired lease over (strategies/key-atomic.ts): a campaign counts the runs that got there.
    ...(TAKES_OVER.has(variant) ? { situations: ['lease-takeover'] } : {}),
    // Processing (the slow fault) happens in the `process` phase, after the claim or check.
    slowStep: 'process',
    memory: () => ({ strategy: createStrategy(variant, { completedTtlMs: d.completedTtlMs }) }),
    // The file's lease and TTL are this service's deployment; SPEC §3's lease rule refuses an unsafe one.
    deploy: (x) => {
      const problem = usesLease(variant) && !x.allowUnsafe ? leaseProblem({ leaseMs: x.leaseMs, clientTimeoutMs: x.clientTimeoutMs, processingMs: x.processingMs }) : null;
      if (problem !== null) throw new Error(problem);
      return trackerService({ variant, leaseMs: x.leaseMs, ...(x.completedTtlMs !== undefined ? { completedTtlMs: x.completedTtlMs } : {}) });
    },
    handle: (req, sim) => serveTracker(req as TrackerRequest, variant, sim.memory.strategy, new SimContext(storeOn(sim.db), sim, leaseMs)),
    operation: {
      path: '/reports',
      body: (op) => JSON.stringify({ run_id: op.runId, module: op.module, title: op.title, steps: op.steps }),
      resultId: (body) => {
        try {
          const v = JSON.parse(body) as { report_id?: unknown };
          return typeof v.report_id === 'number' ? v.report_id : undefined;
        } catch {
          return undefined;
        }
      },
    },
    effects: {
      of: (db, op) => idsOf(db).reportIdsForRun(op.runId, op.tenant),
      owner: (db, id) => {
        // The tracker's ids are INTEGER rowids; "7" names report 7 as 7 does (one id, whatever its JSON type).
        const o = idsOf(db).ownerOfReport(Number(id));
        return o === undefined ? undefined : { runId: o.run_id, tenant: o.tenant };
      },
      total: (db) => idsOf(db).countReports(),
      noun: 'report',
    },
    progress: {
      settleMs: leaseMs,
      leased: usesLease(variant),
      query: (op) => ({ path: `/reports?run_id=${encodeURIComponent(op.runId)}` }),
      found: (status, body) => status === 200 && (JSON.parse(body) as { reports: unknown[] }).reports.length > 0,
    },
  });
}

/** The variants whose claim takes an expired lease over (key_atomic's strategy, lease guards intact or broken). */
const TAKES_OVER: ReadonlySet<Variant> = new Set<Variant>(['key_atomic', 'key_atomic_nofence', 'key_atomic_unscoped', 'key_atomic_early_takeover', 'key_atomic_unfenced_finish', 'key_atomic_unfenced_release', 'key_atomic_no_fingerprint']);

/** The {@link StrategyContext} of one request, on the service API's {@link ServiceSim}. */
class SimContext implements StrategyContext {
  constructor(
    readonly store: Store,
    private readonly sim: ServiceSim<TrackerMemory>,
    readonly leaseMs: number,
  ) {}

  nowMs(): number {
    return this.sim.now();
  }

  step(label: string, footprint?: Footprint): Promise<void> {
    return this.sim.step(label, footprint);
  }

  async process(): Promise<void> {
    // The host spends the slow fault's time at the definition's slowStep (`process`), right after this phase's step.
  }

  crashPoint(point: string): void {
    this.sim.crashPoint(point);
  }

  reached(situation: string): void {
    this.sim.reached(situation);
  }

  defer<T>(): Deferred<T> {
    return this.sim.defer<T>();
  }
}
