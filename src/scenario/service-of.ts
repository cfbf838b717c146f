import type { ServiceDefinition } from '../service/definition.js';
import { serviceFor } from '../service/run.js';
import { trackerService } from '../tracker/service.js';
import { assertLease } from '../tracker/lease.js';
import type { Variant } from '../tracker/strategy.js';
import { usesLease } from '../tracker/variants.js';
import { recoveryTimeoutMs } from './recovery.js';
import type { Scenario } from './schema.js';

/**
 * The service a scenario runs: a user's module (the definition given, or
 * the one loaded from its path), or a built-in tracker variant — itself a
 * {@link ServiceDefinition}, deployed with the scenario's lease. A built-in
 * deployment whose lease breaks SPEC §3's rule (lease > client timeout +
 * processing) is refused with the rule's message unless the scenario builds
 * it unsafe on purpose (`allowUnsafeLease`).
 */
export function serviceOf(s: Scenario, given?: ServiceDefinition): ServiceDefinition {
  if (s.service.module !== undefined) return serviceFor(s, given);
  const variant = s.service.variant as Variant;
  if (usesLease(variant) && !s.service.allowUnsafeLease) {
    try {
      assertLease({ leaseMs: s.service.leaseMs, clientTimeoutMs: recoveryTimeoutMs(s), processingMs: s.faults.slowMs });
    } catch (e) {
      throw new Error(`s0 (${variant}): ${(e as Error).message}`);
    }
  }
  return trackerService({ variant, leaseMs: s.service.leaseMs, ...(s.service.completedTtlMs !== undefined ? { completedTtlMs: s.service.completedTtlMs } : {}) });
}
