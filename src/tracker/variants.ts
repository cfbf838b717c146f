import { VARIANTS, type Variant, type WriteStrategy } from './strategy.js';
import { KeyAtomicStrategy, BROKEN_GUARDS } from './strategies/key-atomic.js';
import { KeyAtomicRacyClaimStrategy } from './strategies/key-atomic-racy.js';
import { KeySplitStrategy } from './strategies/key-split.js';
import { MemorySingleflightStrategy } from './strategies/memory-singleflight.js';
import { NaiveStrategy } from './strategies/naive.js';

/** Options some strategies need. */
export interface StrategyOptions {
  /** memory_singleflight: how long a completed result is replayable, in ms. */
  completedTtlMs?: number;
}

/** Builds the strategy for a variant. */
export function createStrategy(variant: Variant, opts: StrategyOptions = {}): WriteStrategy {
  switch (variant) {
    case 'naive':
      return new NaiveStrategy();
    case 'key_split':
      return new KeySplitStrategy();
    case 'key_atomic':
      return new KeyAtomicStrategy(true);
    case 'key_atomic_nofence':
      return new KeyAtomicStrategy(false);
    case 'key_atomic_unscoped':
      // The strategy is key_atomic's; the instance skips the tenant scope.
      return new KeyAtomicStrategy(true, 'key_atomic_unscoped');
    case 'key_atomic_racy_claim':
      return new KeyAtomicRacyClaimStrategy();
    case 'memory_singleflight':
      return new MemorySingleflightStrategy(opts.completedTtlMs);
    case 'key_atomic_no_expiry':
    case 'key_atomic_early_takeover':
    case 'key_atomic_unfenced_finish':
    case 'key_atomic_unfenced_release':
    case 'key_atomic_no_fingerprint':
    case 'key_atomic_refuse_keyed':
      return new KeyAtomicStrategy(true, variant, BROKEN_GUARDS[variant]);
    default:
      throw new Error(`unknown tracker variant '${String(variant)}'`);
  }
}

/**
 * The step labels each variant passes to `env.step`, in order. A label names
 * the phase about to run; `respond` comes after the last commit and before
 * the answer is returned (the place to kill "after commit, before reply").
 */
export const STEP_LABELS: Readonly<Record<Variant, readonly string[]>> = {
  naive: ['process', 'insert', 'respond'],
  key_split: ['check', 'process', 'insert', 'register', 'respond'],
  key_atomic: ['claim', 'process', 'finish', 'respond'],
  key_atomic_nofence: ['claim', 'process', 'finish', 'respond'],
  key_atomic_unscoped: ['claim', 'process', 'finish', 'respond'],
  key_atomic_racy_claim: ['claim', 'claim-write', 'process', 'finish', 'respond'],
  key_atomic_no_expiry: ['claim', 'process', 'finish', 'respond'],
  key_atomic_early_takeover: ['claim', 'process', 'finish', 'respond'],
  key_atomic_unfenced_finish: ['claim', 'process', 'finish', 'respond'],
  key_atomic_unfenced_release: ['claim', 'process', 'finish', 'respond'],
  key_atomic_no_fingerprint: ['claim', 'process', 'finish', 'respond'],
  key_atomic_refuse_keyed: ['claim', 'process', 'finish', 'respond'],
  memory_singleflight: ['check', 'process', 'insert', 'respond'],
};

/**
 * The crash point of each variant (SPEC §3, crash_mid_request): `naive` and
 * `key_split` right after the report commit (key_split: before the key is
 * registered), the others after the claim (or in-flight entry) and
 * processing, before the report is written.
 */
export const CRASH_POINTS: Readonly<Record<Variant, string>> = Object.fromEntries(
  VARIANTS.map((v) => [v, v === 'naive' || v === 'key_split' ? 'after-insert' : 'after-process']),
) as Record<Variant, string>;

/** True for the variants whose correctness depends on a lease. */
export function usesLease(variant: Variant | undefined): boolean {
  return variant !== undefined && variant.startsWith('key_atomic');
}
