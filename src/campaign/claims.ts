import type { BuiltinName as Variant } from '../tracker/builtin.js';
import type { KeySource } from '../harness/keys.js';
import type { FaultKind } from '../scenario/arbitraries.js';
import type { Invariant } from '../checkers/invariants.js';

/** The harness-layer faults of SPEC §3 (everything but the model layer). */
export const HARNESS_FAULTS: readonly FaultKind[] = ['loseResponse', 'crash', 'slow', 'concurrency', 'kill', 'pause', 'clockOffset', 'instances', 'loseAllAnswers', 'tenants'];

/**
 * What key_atomic and its guard canaries are judged under: every harness-layer
 * fault plus the generator's variety for the guards — the same title in two
 * runs, one key sent with two bodies, a safe lease whose processing outlasts
 * half of it, and a stalled request that crashes after it was taken over.
 */
export const KEY_ATOMIC_FAULTS: readonly FaultKind[] = [...HARNESS_FAULTS, 'sameTitles', 'keyReuse', 'leaseRace', 'crashTakeover'];

/** Lost responses only: after the commit (the service fault) or on the way back (the network). */
export const LOST_RESPONSES: readonly FaultKind[] = ['loseResponse', 'loseAllAnswers'];

/** The minimal shape a shrunk counterexample must have. */
export interface MinimalShape {
  operations: number;
  workers?: number;
  /** Upper bound on the number of faults (counted by scenarioSize). */
  faultsMax: number;
  /** Exact number of attempts on the wire, if the claim pins it. */
  attempts?: number;
  /** Exact number of preemptions in the minimised schedule, if the claim pins it. */
  preemptions?: number;
}

/**
 * A claim: "invariants 1–5 hold for this variant and key source under these
 * faults" — expected to hold (the fix) or to fail (a known-wrong variant,
 * the canary that proves the faults fire).
 */
export interface Claim {
  id: string;
  title: string;
  variant: Variant;
  keySource: KeySource;
  faults: readonly FaultKind[];
  expected: 'holds' | 'fails';
  /** For failing claims: the invariant the counterexample must break. Default `exactly-one`. */
  violation?: Invariant;
  /** For failing claims: what the shrunk counterexample must look like. */
  minimal?: MinimalShape;
}

/** Every claim `retrysim check` runs: the fixes expected to hold and their canaries expected to fail. */
export const CLAIMS: readonly Claim[] = [
  {
    id: 'key_atomic-tool_call-holds',
    title: 'key_atomic with fencing and tool_call keys keeps exactly one report under every harness-layer fault',
    variant: 'key_atomic', keySource: 'tool_call', faults: KEY_ATOMIC_FAULTS, expected: 'holds',
  },
  {
    id: 'key_atomic-business-holds',
    title: 'key_atomic with fencing and business keys keeps exactly one report under every harness-layer fault',
    variant: 'key_atomic', keySource: 'business', faults: KEY_ATOMIC_FAULTS, expected: 'holds',
  },
  {
    id: 'naive-none-fails',
    title: 'naive without keys duplicates a report after one lost response',
    variant: 'naive', keySource: 'none', faults: LOST_RESPONSES, expected: 'fails',
    minimal: { operations: 1, workers: 1, faultsMax: 1, attempts: 2, preemptions: 0 },
  },
  {
    id: 'key_split-tool_call-race-fails',
    title: 'key_split: two requests with one key both pass the lookup before either registers it (no fault, one preemption)',
    variant: 'key_split', keySource: 'tool_call', faults: ['concurrency'], expected: 'fails',
    minimal: { operations: 1, workers: 2, faultsMax: 0, attempts: 2, preemptions: 1 },
  },
  {
    id: 'key_split-tool_call-crash-fails',
    title: 'key_split: a crash between its two commits leaves a report without its key, and the retry files a second',
    variant: 'key_split', keySource: 'tool_call', faults: ['crash'], expected: 'fails',
    minimal: { operations: 1, workers: 1, faultsMax: 1, attempts: 2, preemptions: 0 },
  },
  {
    id: 'key_atomic_nofence-tool_call-fails',
    title: 'key_atomic with fencing off lets a stale, taken-over request commit a second report',
    variant: 'key_atomic_nofence', keySource: 'tool_call', faults: HARNESS_FAULTS, expected: 'fails',
    // Timing faults shrink toward *shorter* delays, so fast-check can stop at a
    // local minimum where two delays (slow processing plus a short pause)
    // together outlast the lease; one timing fault is the usual result.
    minimal: { operations: 1, faultsMax: 2 },
  },
  {
    id: 'key_atomic_racy_claim-tool_call-fails',
    title: 'a claim that reads the key in one step and writes it in the next lets a request re-claim a finished key: a second report',
    variant: 'key_atomic_racy_claim', keySource: 'tool_call', faults: HARNESS_FAULTS, expected: 'fails',
    // Pure concurrency (one preemption after the read) or one fault that
    // lets the read go stale (e.g. a take-over): whichever the search meets first.
    minimal: { operations: 1, faultsMax: 1 },
  },
  {
    id: 'key_atomic-per_attempt-fails',
    title: 'a fresh key per attempt dedups nothing: one lost response makes two reports',
    variant: 'key_atomic', keySource: 'per_attempt', faults: LOST_RESPONSES, expected: 'fails',
    minimal: { operations: 1, workers: 1, faultsMax: 1, attempts: 2 },
  },
  {
    id: 'memory_singleflight-tool_call-fails',
    title: 'the in-process single-flight store loses its memory across a restart and is not shared by two instances',
    variant: 'memory_singleflight', keySource: 'tool_call', faults: ['loseResponse', 'kill', 'instances'], expected: 'fails',
    minimal: { operations: 1, workers: 1, faultsMax: 2 },
  },
  {
    id: 'key_atomic_unscoped-tool_call-fails',
    title: "a key table not scoped by tenant hands one tenant another tenant's report when their keys coincide",
    variant: 'key_atomic_unscoped', keySource: 'tool_call', faults: HARNESS_FAULTS, expected: 'fails', violation: 'tenant-isolation',
    minimal: { operations: 2, workers: 2, faultsMax: 0 },
  },
  // One canary per guard of key_atomic (SPEC §5), each a one-edit variant that must break the invariant it names.
  {
    id: 'key_atomic_no_expiry-tool_call-fails',
    title: 'a lease that never expires leaves a killed request\'s key in progress forever: no progress once the faults stop',
    variant: 'key_atomic_no_expiry', keySource: 'tool_call', faults: HARNESS_FAULTS, expected: 'fails', violation: 'progress',
    // No minimal shape: one kill is the essence, but with some seeds shrinking stops at two operations.
  },
  {
    id: 'key_atomic_early_takeover-tool_call-fails',
    title: 'taking over after half the lease lets each retry take over the live request before it: with fencing, nobody finishes',
    variant: 'key_atomic_early_takeover', keySource: 'tool_call', faults: KEY_ATOMIC_FAULTS, expected: 'fails', violation: 'progress',
    // Slow processing, plus what left no report behind (a kill, or a crash after a pause).
    minimal: { operations: 1, workers: 1, faultsMax: 3 },
  },
  {
    id: 'key_atomic_unfenced_release-tool_call-fails',
    title: 'a stale request that crashes and frees the key without checking its fence lets the key be claimed again: a second report',
    variant: 'key_atomic_unfenced_release', keySource: 'tool_call', faults: KEY_ATOMIC_FAULTS, expected: 'fails', violation: 'exactly-one',
    minimal: { operations: 1, faultsMax: 3 },
  },
  {
    id: 'key_atomic_no_fingerprint-tool_call-fails',
    title: 'without the body fingerprint, a key sent with a second body replays the first body\'s report to another operation',
    variant: 'key_atomic_no_fingerprint', keySource: 'tool_call', faults: ['keyReuse'], expected: 'fails', violation: 'id-exists',
    minimal: { operations: 2, workers: 2, faultsMax: 0 },
  },
  {
    id: 'key_atomic_refuse_keyed-tool_call-fails',
    title: 'a service that answers 409 to every keyed write is safe and makes no progress: safety alone is not "holds"',
    variant: 'key_atomic_refuse_keyed', keySource: 'tool_call', faults: [], expected: 'fails', violation: 'progress',
    minimal: { operations: 1, workers: 1, faultsMax: 0 },
  },
  {
    id: 'key_atomic_unfenced_finish-tool_call-holds',
    title: 'a finish guarded by status alone (no fence) still keeps exactly one report: the status test is itself a fence here (its canary: key_atomic_nofence)',
    variant: 'key_atomic_unfenced_finish', keySource: 'tool_call', faults: KEY_ATOMIC_FAULTS, expected: 'holds',
  },
  {
    id: 'key_atomic-tool_call-model_new_id-fails',
    title: 'a model resubmitting as a new tool call gets a new tool_call key: a second report',
    variant: 'key_atomic', keySource: 'tool_call', faults: ['loseAllAnswers', 'modelNewId'], expected: 'fails',
    minimal: { operations: 1, workers: 1, faultsMax: 2, attempts: 2 },
  },
  {
    id: 'key_atomic-business-model_reword-fails',
    title: 'a model rewording the title changes the business key: a second report',
    variant: 'key_atomic', keySource: 'business', faults: ['loseAllAnswers', 'modelReword'], expected: 'fails',
    minimal: { operations: 1, workers: 1, faultsMax: 2, attempts: 2 },
  },
];

/** The claim with this id; throws, listing the ids, for an unknown one. */
export function claimById(id: string): Claim {
  const c = CLAIMS.find((x) => x.id === id);
  if (c === undefined) throw new Error(`unknown claim '${id}'; claims: ${CLAIMS.map((x) => x.id).join(', ')}`);
  return c;
}
