import type { FaultKind } from '../scenario/arbitraries.js';
import type { Scenario } from '../scenario/schema.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { parseScenario } from '../scenario/load.js';
import { serviceSmallScenarios } from '../service/small.js';
import type { ServiceDefinition } from '../service/definition.js';
import { builtinService, type BuiltinName } from '../tracker/builtin.js';

/**
 * Small scenarios for a user's retry client (`retrysim check --client
 * --explore exhaustive`): the service's own small scenarios (one call of
 * the client; no fault, or one lost answer, crash, slow or paused request,
 * kill at each declared step, two instances) from the fault space asked
 * for, plus what only a client is judged on — a rate limiter answering
 * 429 with `Retry-After: 1` once, and a front end answering once with each
 * status that says retrying cannot help (400, 422) and one that says it may
 * (409, 503). Against a built-in service the same scenarios name the
 * variant instead of a module.
 */
export function clientSmallScenarios(target: { service: ServiceDefinition; module: string } | { variant: BuiltinName }, faults: readonly FaultKind[]): Scenario[] {
  const def = 'service' in target ? target.service : builtinService(target.variant);
  const module = 'service' in target ? target.module : target.variant;
  // Concurrency (two calls of one operation) is not in a client's space: two calls are two operations to the client.
  // The client is the user's, with its own timeout and attempts: a service scenario that differs from an
  // earlier one only in the harness client's (the pause past the lease, retried through it and after it) is
  // the same scenario here. Its timeout of 1.1 leases would also be refused by a built-in service.
  const seen = new Set<string>();
  const base: Scenario[] = [];
  for (const s of serviceSmallScenarios(def, module, faults.filter((f) => f !== 'concurrency'))) {
    const same = JSON.stringify({ ...s, name: '', client: { ...s.client, timeoutMs: 0, maxAttempts: 0 } });
    if (!seen.has(same)) base.push(s);
    seen.add(same);
  }
  const extra: Array<[string, boolean, Scenario['network']]> = [
    ['one 429 with Retry-After: 1', faults.includes('throttle'), { ...base[0]!.network, throttle: { count: 1, retryAfterS: 1 } }],
    ...[400, 422, 409, 503].map((status): [string, boolean, Scenario['network']] => [`the front end answers ${status} once`, faults.includes('answer'), { ...base[0]!.network, answer: { status, count: 1 } }]),
  ];
  const all = [...base, ...extra.filter(([, on]) => on).map(([name, , network]) => ({ ...base[0]!, name: `${def.name}: ${name}`, network }))];
  // A built-in variant is named as such (its files replay without a module).
  // The client lives in the present (client.epochMs, as its campaign's cases do: src/client/campaign.ts).
  return all.map((s) => parseScenario(JSON.stringify({ ...('service' in target ? s : { ...s, service: { ...s.service, module: undefined, variant: target.variant } }), client: { ...s.client, epochMs: SIM_EPOCH_MS } })));
}
