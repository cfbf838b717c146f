import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { isHostedApp } from '../app/define.js';
import type { ServiceDefinition } from './definition.js';
import { isOwnService } from './own.js';

/**
 * The `service.epochMs` a newly found scenario of `def` records: 2026-01-01
 * (src/sim/epoch.ts) for a user's service, so its `Date.now()`, `sim.now()`
 * and SQLite's `'now'` read the present, as in production. None (epoch 0,
 * no field written) for two kinds of definition whose files and hashes stay
 * as they were: retrysim's own services (the built-in tracker's variants
 * read only differences of `sim.now()`, so a 1970 clock changes no verdict
 * of theirs, while 2026 would change the `created_at` of every answer and
 * so every hash a test or a doc pins), and hosted apps (their own machine
 * already starts at 2026: src/app/instance-clock.ts).
 */
export function serviceEpochMs(def: ServiceDefinition): number | undefined {
  return isHostedApp(def) || isOwnService(def) ? undefined : SIM_EPOCH_MS;
}

/** `{ epochMs }` for a scenario's `service` of this definition, as check writes it; `{}` for apps and built-ins. */
export function serviceEpochField(def: ServiceDefinition): { epochMs?: number } {
  const epochMs = serviceEpochMs(def);
  return epochMs === undefined ? {} : { epochMs };
}
