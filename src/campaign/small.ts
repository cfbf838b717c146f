import { parseScenario } from '../scenario/load.js';
import { SCENARIO_FORMAT, type Scenario } from '../scenario/schema.js';
import type { Claim } from './claims.js';
import type { FaultKind } from '../scenario/arbitraries.js';
import { builtinService } from '../tracker/builtin.js';

/**
 * Small scenarios for bounded exhaustive exploration, drawn from the claim's
 * own fault space: one operation (two workers on its key when the claim has
 * concurrency) with at most one fault, or two tenants whose raw keys
 * coincide (or, for model-layer claims, one worker whose first tool call
 * loses every answer). Small enough that every schedule can be run.
 */
export function smallScenarios(claim: Claim): Scenario[] {
  const has = (k: FaultKind) => claim.faults.includes(k);
  const model = has('modelNewId') || has('modelReword');
  // Two workers on one key only where the claim's fault space has concurrency,
  // so an exhaustive counterexample uses the claim's own faults.
  const workers = !model && has('concurrency') ? 2 : 1;
  // Where a request stalls or dies while it holds its key: the service's processing step (the tracker's `process`).
  const def = builtinService(claim.variant);
  const processing = def.slowStep ?? def.steps[0]!;
  const base = {
    format: SCENARIO_FORMAT,
    seed: 1,
    service: { variant: claim.variant, leaseMs: 5000 },
    client: { keySource: claim.keySource, maxAttempts: 2 },
    operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers }],
    expect: {},
  };
  const variants: Array<[string, boolean, Record<string, unknown>]> = model
    ? [['model resubmits after every answer is lost', true, {
        client: { ...base.client, model: { resubmits: 1, reword: has('modelReword') } },
        network: { loseResponses: 2 },
      }]]
    : [
        ['no fault', true, {}],
        ['one lost response', has('loseResponse'), { faults: { loseResponseAfterCommit: 1 } }],
        ['one answer lost on the way back', has('loseAllAnswers'), { network: { loseResponses: 1 } }],
        ['one crash', has('crash'), { faults: { crashMidRequest: 1 } }],
        ['slow processing', has('slow'), { faults: { slowMs: 50 } }],
        ['one request stalls past a short lease', has('pause'), {
          service: { ...base.service, leaseMs: 30, allowUnsafeLease: true },
          faults: { pause: { atStep: processing, ms: 60, count: 1 } },
          operations: [{ ...base.operations[0], staggerMs: 40 }],
        }],
        ['kill after the check/claim', has('kill'), { faults: { kill: { atStep: processing, restartAfterMs: 5 } } }],
        ['two instances, one lost response', has('instances') && has('loseResponse'), { service: { ...base.service, instances: 2 }, faults: { loseResponseAfterCommit: 1 } }],
        // One key sent again with a second body, after the first has finished (SPEC §3: 422, nothing written).
        ['one key, a second body', has('keyReuse'), { operations: [
          { id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers: 1 },
          { id: 'op2', runId: 'run-2', module: 'checkout', title: 'Refund fails', workers: 1, startMs: 50, keyFrom: 'op1' },
        ] }],
        // A safe lease (lease > timeout + processing) whose processing is longer than half of it.
        ['processing longer than half the lease', has('leaseRace'), {
          service: { ...base.service, leaseMs: 1000 },
          client: { ...base.client, timeoutMs: 100, maxAttempts: 4 },
          faults: { slowMs: 700 },
        }],
        // The same, and the first attempt crashes: whoever comes next must finish within half a lease's take-overs.
        ['processing longer than half the lease, one crash', has('leaseRace') && has('crash'), {
          service: { ...base.service, leaseMs: 1000 },
          client: { ...base.client, timeoutMs: 100, maxAttempts: 1 },
          faults: { slowMs: 700, crashMidRequest: 1 },
        }],
        // The first request stalls past its lease, a retry takes over, then the stale request crashes; a second worker comes later.
        ['a stalled request crashes after a take-over', has('crashTakeover'), {
          // The retry comes after the client's timeout, which outlasts the lease whatever the jitter.
          service: { ...base.service, leaseMs: 100, allowUnsafeLease: true },
          client: { ...base.client, timeoutMs: 150, maxAttempts: 2 },
          faults: { pause: { atStep: processing, ms: 1000, count: 1, thenCrash: true } },
          operations: [{ ...base.operations[0], workers: 2, staggerMs: 1500 }],
        }],
        // Two tenants whose runs coincide send the same raw key (tenant isolation).
        ['two tenants, same raw key', has('tenants'), { operations: [
          { id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers: 1 },
          { id: 'op2', runId: 'run-1', module: 'checkout', title: 'Pay fails', workers: 1, tenant: 'globex' },
        ] }],
        // A stop-the-world stall of two minutes, far past the lease; a second worker comes after the lease
        // and takes the key over. The only small scenario longer than a minute of virtual time: no generated
        // run lasts that long, and a holding claim's coverage should still show a run that did.
        ['a request stalls for two minutes, a later worker takes over', has('pause') && has('concurrency'), {
          faults: { pause: { atStep: 'process', ms: 120_000, count: 1 } },
          operations: [{ ...base.operations[0], workers: 2, staggerMs: 10_000 }],
        }],
      ];
  return variants.filter(([, on]) => on).map(([name, , over]) => parseScenario(JSON.stringify({ ...base, name: `${claim.variant}/${claim.keySource}: ${name}`, ...over })));
}
