import { parseScenario } from '../scenario/load.js';
import { SCENARIO_FORMAT, type Scenario } from '../scenario/schema.js';
import type { Claim } from './claims.js';

/**
 * Small scenarios for bounded exhaustive exploration: two workers on one key
 * with at most one fault, or two tenants whose raw keys coincide (or, for model-layer claims, one worker whose first
 * tool call loses every answer). Small enough that every schedule can be run.
 */
export function smallScenarios(claim: Claim): Scenario[] {
  const model = claim.faults.includes('modelNewId') || claim.faults.includes('modelReword');
  const base = {
    format: SCENARIO_FORMAT,
    seed: 1,
    service: { variant: claim.variant, leaseMs: 5000 },
    client: { keySource: claim.keySource, maxAttempts: 2 },
    operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers: model ? 1 : 2 }],
    expect: {},
  };
  const variants: Array<[string, Record<string, unknown>]> = model
    ? [['model resubmits after every answer is lost', {
        client: { ...base.client, model: { resubmits: 1, reword: claim.faults.includes('modelReword') } },
        network: { loseResponses: 2 },
      }]]
    : [
        ['no fault', {}],
        ['one lost response', { faults: { loseResponseAfterCommit: 1 } }],
        ['one crash', { faults: { crashMidRequest: 1 } }],
        ['slow processing', { faults: { slowMs: 50 } }],
        ['one request stalls past a short lease', {
          service: { ...base.service, leaseMs: 30, allowUnsafeLease: true },
          faults: { pause: { atStep: 'process', ms: 60, count: 1 } },
          operations: [{ ...base.operations[0], staggerMs: 40 }],
        }],
        ['kill after the check/claim', { faults: { kill: { atStep: 'process', restartAfterMs: 5 } } }],
        ['two instances, one lost response', { service: { ...base.service, instances: 2 }, faults: { loseResponseAfterCommit: 1 } }],
        // Two tenants whose runs coincide send the same raw key (tenant isolation).
        ['two tenants, same raw key', { operations: [
          { id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers: 1 },
          { id: 'op2', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers: 1, tenant: 'globex' },
        ] }],
      ];
  return variants.map(([name, over]) => parseScenario(JSON.stringify({ ...base, name: `${claim.variant}/${claim.keySource}: ${name}`, ...over })));
}
