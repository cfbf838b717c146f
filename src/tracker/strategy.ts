import type { Deferred } from './env.js';
import type { Footprint } from '../sim/footprint.js';
import type { TrackerResponse } from './messages.js';
import type { Store } from './store.js';
import type { ReportInput } from './validate.js';

/** The write strategies of SPEC §3. */
/**
 * `key_atomic_unscoped` is key_atomic whose key table is keyed by the raw
 * Idempotency-Key, not scoped by tenant: the known-wrong variant for SPEC §5
 * invariant 4 (no request receives another tenant's result).
 * `key_atomic_racy_claim` reads the key in one step and writes its claim in
 * a later one: the known-wrong variant for the claim's atomicity.
 */
/**
 * The other `key_atomic_*` variants are each key_atomic with one guard
 * broken (see KeyAtomicGuards in strategies/key-atomic.ts): the canaries of
 * SPEC §5 that each break a named invariant.
 */
export type Variant =
  | 'naive'
  | 'key_split'
  | 'key_atomic'
  | 'key_atomic_nofence'
  | 'key_atomic_unscoped'
  | 'key_atomic_racy_claim'
  | 'key_atomic_no_expiry'
  | 'key_atomic_early_takeover'
  | 'key_atomic_unfenced_finish'
  | 'key_atomic_unfenced_release'
  | 'key_atomic_no_fingerprint'
  | 'key_atomic_refuse_keyed'
  | 'memory_singleflight';

/** Every variant, in the order the matrix shows them. */
export const VARIANTS: readonly Variant[] = [
  'naive',
  'key_split',
  'key_atomic',
  'key_atomic_nofence',
  'key_atomic_unscoped',
  'key_atomic_racy_claim',
  'key_atomic_no_expiry',
  'key_atomic_early_takeover',
  'key_atomic_unfenced_finish',
  'key_atomic_unfenced_release',
  'key_atomic_no_fingerprint',
  'key_atomic_refuse_keyed',
  'memory_singleflight',
];

/** A validated `POST /reports`, ready for a strategy. */
export interface WriteRequest {
  tenant: string;
  /** The raw idempotency key, or null when the request has none. */
  key: string | null;
  /** `scopeKey(tenant, 'POST', key)`, or null without a key. */
  scopedKey: string | null;
  report: ReportInput;
  /** SHA-256 of the canonical body. */
  fingerprint: string;
}

/**
 * What a strategy may use while handling one request. Everything touching
 * time or faults goes through here so strategies stay free of policy.
 */
export interface StrategyContext {
  readonly store: Store;
  readonly leaseMs: number;
  /** The instance's clock: `env.now()` plus its skew. */
  nowMs(): number;
  /**
   * An interleaving point before phase `label` (applies the pause fault).
   * `footprint` declares what the phase touches up to the next step (or the
   * response): the key's row, the reports table. Omitted, it conflicts
   * with everything, so exhaustive exploration reduces nothing around it.
   */
  step(label: string, footprint?: Footprint): Promise<void>;
  /** The slow part: sleeps `slowMs` when the fault is set. */
  process(): Promise<void>;
  /** The variant's crash point (see `CRASH_POINTS`): throws {@link CrashFault} when the counter fires. */
  crashPoint(point: string): void;
  /**
   * A situation worth counting was reached (`lease-takeover`): the service
   * API's `sim.reached`, for a campaign's coverage table. Optional: a
   * context that does not count leaves it out.
   */
  reached?(situation: string): void;
  /** A promise the scheduler knows about (single-flight: twins await the winner). */
  defer<T>(): Deferred<T>;
}

/** One write strategy. Expected outcomes (409, 422, replay) are returned, not thrown. */
export interface WriteStrategy {
  readonly variant: Variant;
  /** Step labels this strategy passes to `env.step`, in order. */
  readonly stepLabels: readonly string[];
  /** Handles one validated write. */
  write(req: WriteRequest, ctx: StrategyContext): Promise<TrackerResponse>;
  /** Forget in-process state (a process restart). SQLite data is untouched. */
  restart(): void;
}
