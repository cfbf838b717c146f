import type { ServiceDefinition } from '../service/definition.js';
import { leaseProblem } from './lease.js';

export { DEFAULT_CLIENT_TIMEOUT_MS, DEFAULT_LEASE_MS } from './lease.js';
import { trackerService } from './service.js';
import { VARIANTS, type Variant } from './strategy.js';
import { usesLease } from './variants.js';

/**
 * The one door into the built-in tracker for code outside src/tracker/
 * (docs/design.md invariant 7): a built-in service is found by its name and
 * handed out as a {@link ServiceDefinition}, like any user's module. Its
 * steps, tables, words and lease rule stay behind this file.
 */

/** The name of a built-in service. */
export type BuiltinName = Variant;

/** The names of the built-in services (the tracker's write strategies), in the order the matrix shows them. */
export const BUILTIN_SERVICES: readonly BuiltinName[] = VARIANTS;

/** What a scenario's `service` fixes for a built-in besides its name. */
export interface BuiltinOptions {
  /** Lease of an in-progress key (the leased variants); also how long recovery waits. Default 5000. */
  leaseMs?: number;
  /** memory_singleflight: how long a completed result is replayable. */
  completedTtlMs?: number;
}

/** True when `name` is a built-in service. */
export function isBuiltinService(name: string): boolean {
  return (BUILTIN_SERVICES as readonly string[]).includes(name);
}

/**
 * The built-in service `name`, deployed with `opts`. Throws an Error naming
 * the built-ins when there is none by that name.
 */
export function builtinService(name: string, opts: BuiltinOptions = {}): ServiceDefinition {
  if (!isBuiltinService(name)) throw new Error(`no built-in service '${name}' (built-ins: ${BUILTIN_SERVICES.join(', ')})`);
  return trackerService({ variant: name as Variant, ...opts });
}

/** The numbers a deployment's safety rule relates. */
export interface DeploymentCheck {
  leaseMs: number;
  clientTimeoutMs: number;
  /** Longest processing time (the slow fault). */
  processingMs: number;
}

/**
 * Why this deployment of built-in `name` is unsafe by construction (SPEC
 * §3's lease rule, for the variants that rely on a lease), or null.
 */
export function builtinDeploymentProblem(name: string, c: DeploymentCheck): string | null {
  if (!isBuiltinService(name) || !usesLease(name as Variant)) return null;
  return leaseProblem(c);
}
