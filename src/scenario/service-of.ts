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
  const found = s.service.module !== undefined ? serviceFor(s, given) : builtin(s.service.variant!);
  const def = deployed(s, found);
  const issues = faultPlacementIssues(s, def);
  if (issues.length > 0) throw new ServiceError(def.name, `scenario '${s.name}' ${issues.map((i) => `at ${i.path}: ${i.message}`).join('; ')}`);
  return def;
}

/*
 * A campaign asks for the service of every scenario it runs — thousands a
 * second, nearly all with the same few deployments. Definitions are values
 * (per-instance state comes from their `memory()`, per-run state from the
 * host), so one definition per built-in name and one deployment per set of
 * knobs serve every run that names them.
 */
const builtins = new Map<string, ServiceDefinition>();
const deployments = new WeakMap<ServiceDefinition, Map<string, ServiceDefinition>>();

function builtin(name: string): ServiceDefinition {
  let d = builtins.get(name);
  if (d === undefined) builtins.set(name, (d = builtinService(name)));
  return d;
}

function deployed(s: Scenario, def: ServiceDefinition): ServiceDefinition {
  if (def.deploy === undefined) return def;
  const knobs = {
    leaseMs: s.service.leaseMs,
    ...(s.service.completedTtlMs !== undefined ? { completedTtlMs: s.service.completedTtlMs } : {}),
    clientTimeoutMs: recoveryTimeoutMs(s),
    processingMs: s.faults.slowMs,
    allowUnsafe: s.service.allowUnsafeLease,
  };
  const key = `${knobs.leaseMs}/${knobs.completedTtlMs}/${knobs.clientTimeoutMs}/${knobs.processingMs}/${knobs.allowUnsafe}`;
  let byKnobs = deployments.get(def);
  if (byKnobs === undefined) deployments.set(def, (byKnobs = new Map()));
  const known = byKnobs.get(key);
  if (known !== undefined) return known;
  let d: ServiceDefinition;
  try {
    d = def.deploy(knobs);
  } catch (e) {
    // A refused deployment is not cached: each scenario that asks for it gets its own line.
    throw new ServiceError(def.name, `s0: ${e instanceof Error ? e.message : describeThrow(e)}`);
  }
  byKnobs.set(key, d);
  return d;
}
