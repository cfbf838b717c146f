import type { ServiceDefinition } from '../service/definition.js';
import { ServiceError } from '../service/errors.js';
import { serviceFor } from '../service/run.js';
import { builtinDeploymentProblem, builtinService } from '../tracker/builtin.js';
import { faultPlacementIssues } from './load.js';
import { recoveryTimeoutMs } from './recovery.js';
import type { Scenario } from './schema.js';

/**
 * The service a scenario runs: a user's module (the definition given, or
 * the one loaded from its path), or a built-in found by name — a
 * {@link ServiceDefinition} either way, deployed with the scenario's lease.
 * A built-in deployment that its own safety rule refuses (SPEC §3's lease
 * rule) is refused with the rule's message unless the scenario builds it
 * unsafe on purpose (`allowUnsafeLease`). Faults pinned to a step or crash
 * point the service does not declare are refused here, for built-ins and
 * modules alike, in one line naming the path, the step and the service's
 * steps (a file from `check --service` has only the module's path, so its
 * steps are first known now).
 */
export function serviceOf(s: Scenario, given?: ServiceDefinition): ServiceDefinition {
  const def = s.service.module !== undefined ? serviceFor(s, given) : builtin(s);
  const issues = faultPlacementIssues(s, def);
  if (issues.length > 0) throw new ServiceError(def.name, `scenario '${s.name}' ${issues.map((i) => `at ${i.path}: ${i.message}`).join('; ')}`);
  return def;
}

function builtin(s: Scenario): ServiceDefinition {
  const name = s.service.variant!;
  if (!s.service.allowUnsafeLease) {
    const problem = builtinDeploymentProblem(name, { leaseMs: s.service.leaseMs, clientTimeoutMs: recoveryTimeoutMs(s), processingMs: s.faults.slowMs });
    if (problem !== null) throw new Error(`s0 (${name}): ${problem}`);
  }
  return builtinService(name, { leaseMs: s.service.leaseMs, ...(s.service.completedTtlMs !== undefined ? { completedTtlMs: s.service.completedTtlMs } : {}) });
}
