import { parseScenario } from '../scenario/load.js';
import { SCENARIO_FORMAT, type Scenario } from '../scenario/schema.js';
import { serviceIntent, type FaultKind } from '../scenario/arbitraries.js';
import type { KeySource } from '../harness/keys.js';
import type { ServiceDefinition } from './definition.js';
import { isHostedApp } from '../app/define.js';
import { serviceEpochField } from './epoch.js';

/** The small scenarios' lease (service.leaseMs): the pause past it lasts two. */
const LEASE_MS = 5000;

/**
 * Small scenarios of a user service for bounded exhaustive exploration
 * (`retrysim check --service --explore exhaustive`), drawn from the fault
 * space asked for and placed at the service's own declared points: one
 * operation (two workers on its key when concurrency is in the space) with
 * at most one fault — a lost answer, a crash at each crash point, a slow or
 * paused request at each step (paused past the client's timeout, so the
 * retry arrives while it is stalled; paused past the lease, retried through
 * it and retried once after it), a kill at each step or as its answer
 * leaves — or two tenants
 * whose raw keys coincide (also with both answers lost, so each retries),
 * or the same key sent again with another body.
 * Small enough that every schedule of each can be run.
 */
export function serviceSmallScenarios(def: ServiceDefinition, module: string, faults: readonly FaultKind[], keySource: KeySource = 'tool_call'): Scenario[] {
  const has = (k: FaultKind) => faults.includes(k);
  const workers = has('concurrency') ? 2 : 1;
  // The operation in the service's own words, as the generated campaign sends it.
  const op = { id: 'op1', runId: 'run-1', ...serviceIntent(def.effects.noun, 1), workers };
  const epoch = serviceEpochField(def);
  const base = {
    format: SCENARIO_FORMAT,
    seed: 1,
    service: { module, leaseMs: LEASE_MS, ...epoch },
    client: { keySource, maxAttempts: 2, timeoutMs: 2000 },
    operations: [op],
    expect: {},
  };
  const steps = def.steps;
  const crashPoints = def.crashPoints ?? [];
  const variants: Array<[string, boolean, Record<string, unknown>]> = [
    ['no fault', true, {}],
    ['one lost response after the commit', has('loseResponse'), { faults: { loseResponseAfterCommit: 1 } }],
    ['one answer lost on the way back', has('loseAllAnswers'), { network: { loseResponses: 1 } }],
    ...crashPoints.map((p): [string, boolean, Record<string, unknown>] => [`one crash at ${p}`, has('crash'), { faults: { crashMidRequest: 1, crashAt: p } }]),
    // A hosted app uses one store command several times per request (the
    // claim's SET, the order's, the stored answer's): the answer lost at its
    // second use, after the effect, is where a library that frees the key on
    // an error makes a second order.
    ...(isHostedApp(def) ? crashPoints : []).map((p): [string, boolean, Record<string, unknown>] => [`one crash at ${p}, its 2nd reach in a request`, has('crash'), { faults: { crashMidRequest: 1, crashAt: p, crashAtNth: 2 } }]),
    ...steps.map((s): [string, boolean, Record<string, unknown>] => [`slow after ${s}`, has('slow'), { faults: { slowMs: 2500, slowAtStep: s } }]),
    ...steps.map((s): [string, boolean, Record<string, unknown>] => [`one request paused at ${s} past the client's timeout`, has('pause'), { faults: { pause: { atStep: s, ms: 2500, count: 1 } } }]),
    // Paused for two leases while the client, patient for most of one, retries through it: a claim that
    // expires (a lease, a TTL near it) is taken over while its holder still runs — the random campaign's
    // pause-past-the-lease case, which the 2.5 s pause above never reaches (a 5 s key TTL held "(all)").
    ...steps.map((s): [string, boolean, Record<string, unknown>] => [`one request paused at ${s} past the lease, retried through it`, has('pause'), { faults: { pause: { atStep: s, ms: 2 * LEASE_MS, count: 1 } }, client: { ...base.client, maxAttempts: 5, timeoutMs: Math.round(0.9 * LEASE_MS) } }]),
    // The same pause with a client that outwaits the lease (its one retry goes out after the lease is
    // over, while the holder still sleeps): the retry above, patient for most of a lease, sends every
    // attempt within a short backoff of its timeout, before a 5 s lock expires, so a retry that takes an
    // expired lock over from a holder that then writes anyway (a SET NX EX lock, no fencing) was only
    // found by the random campaign (its run 9; 82,911 schedules here held).
    ...steps.map((s): [string, boolean, Record<string, unknown>] => [`one request paused at ${s} past the lease, retried after it`, has('pause'), { faults: { pause: { atStep: s, ms: 2 * LEASE_MS, count: 1 } }, client: { ...base.client, maxAttempts: 2, timeoutMs: Math.round(1.1 * LEASE_MS) } }]),
    ...steps.map((s): [string, boolean, Record<string, unknown>] => [`kill at ${s}`, has('kill'), { faults: { kill: { atStep: s, restartAfterMs: 5 } } }]),
    // The work done, the answer never sent, the process back without its memory (an in-process cache of answers).
    ['kill as its answer leaves', has('kill'), { faults: { kill: { atAnswer: 1, restartAfterMs: 5 } } }],
    ['two instances, one lost response', has('instances') && has('loseResponse'), { service: { ...base.service, instances: 2 }, faults: { loseResponseAfterCommit: 1 } }],
    ['two tenants, same raw key', has('tenants'), { operations: [
      { ...op, workers: 1 },
      { ...op, id: 'op2', workers: 1, tenant: 'globex' },
    ] }],
    // The same two tenants, each retrying once: a key table that drops the
    // second tenant's entry (a PRIMARY KEY on the raw key alone under a
    // per-tenant lookup) answers both first attempts and charges the second
    // tenant again on its retry; both answers lost, so whichever tenant came
    // second retries, with no preemption.
    ['two tenants, same raw key, both answers lost after the commit', has('tenants') && has('loseResponse'), { operations: [
      { ...op, workers: 1 },
      { ...op, id: 'op2', workers: 1, tenant: 'globex' },
    ], faults: { loseResponseAfterCommit: 2 } }],
    ['one key, a second body', has('keyReuseProbe'), { operations: [{ ...op, workers: 1 }], client: { ...base.client, keyReuseProbe: true } }],
  ];
  return variants.filter(([, on]) => on).map(([name, , over]) => parseScenario(JSON.stringify({ ...base, name: `${def.name}: ${name}`, ...over })));
}
