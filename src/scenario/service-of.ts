import type { ServiceDefinition } from '../service/definition.js';
import { describeThrow, ServiceError } from '../service/errors.js';
import { serviceFor } from '../service/run.js';
import { builtinService } from '../tracker/builtin.js';
import { faultPlacementIssues } from './load.js';
import { recoveryTimeoutMs } from './recovery.js';
import type { Scenario } from './schema.js';

/**
 * The service a scenario runs, by one path for built-ins and users' modules
 * alike (docs/design.md invariant 7): the definition is found — a built-in by its
 * name (src/tracker/builtin.ts), a module by its path (the definition given,
 * or the one loaded from it) — then deployed with the file's `service`
 * knobs when it declares `deploy` (the tracker: its lease, refused when it
 * breaks SPEC §3's lease rule unless `allowUnsafeLease`), then the faults
 * pinned to a step or crash point are checked against what it declares: a
 * file from `check --service` has only the module's path, so its steps are
 * first known here. Each problem is one line naming the path, the step and
 * the service's steps.
 */
export function serviceOf(s: Scenario, given?: ServiceDefinition): ServiceDefinition {
  const found = s.service.module !== undefined ? serviceFor(s, given) : builtinService(s.service.variant!);
  const def = deployed(s, found);
  const issues = faultPlacementIssues(s, def);
  if (issues.length > 0) throw new ServiceError(def.name, `scenario '${s.name}' ${issues.map((i) => `at ${i.path}: ${i.message}`).join('; ')}`);
  return def;
}

function deployed(s: Scenario, def: ServiceDefinition): ServiceDefinition {
  if (def.deploy === undefined) return def;
  try {
    return def.deploy({
      leaseMs: s.service.leaseMs,
      ...(s.service.completedTtlMs !== undefined ? { completedTtlMs: s.service.completedTtlMs } : {}),
      clientTimeoutMs: recoveryTimeoutMs(s),
      processingMs: s.faults.slowMs,
      allowUnsafe: s.service.allowUnsafeLease,
    });
  } catch (e) {
    throw new ServiceError(def.name, `s0: ${e instanceof Error ? e.message : describeThrow(e)}`);
  }
}
