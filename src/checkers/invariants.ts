import type { AttemptRecord, HarnessResult } from '../harness/client.js';
import type { KeySource } from '../harness/keys.js';

/**
 * The invariants of SPEC §5, by name (`progress`, invariant 5, is judged by
 * checkers/progress.ts; `replay-equals-first`, invariant 6, by
 * checkers/replay.ts; `key-reuse` by the key-reuse probe of a user service;
 * `deadline`, `retry-after`, `non-retryable` and `backoff` by a user's retry client's
 * run, src/client).
 */
export type Invariant = 'exactly-one' | 'id-exists' | 'stable-key' | 'tenant-isolation' | 'progress' | 'key-reuse' | 'deadline' | 'retry-after' | 'replay-equals-first' | 'non-retryable' | 'backoff';

/** The key-reuse probe: the same key sent again with a different body after a success, and what came back. */
export interface KeyReuseProbe {
  key: string;
  /** HTTP status, or the transport failure. */
  outcome: number | string;
}

/** One broken invariant, with the operation and a sentence saying how. */
export interface Violation {
  invariant: Invariant;
  op: string;
  detail: string;
}

/** What the checkers need to know about one logical operation at the end of a run. */
export interface OperationEnd {
  id: string;
  runId: string;
  tenant: string;
  keySource: KeySource;
  /** Every attempt of every worker of this operation. */
  attempts: AttemptRecord[];
  /** Each worker's final harness result. */
  results: HarnessResult[];
  /**
   * This operation's key is also sent with another operation's body (the
   * `keyReuse` fault: a client copies one key to two reports). Whichever
   * comes second is rightly refused with 422: not a lack of progress.
   */
  reusesKey?: boolean;
  /** Key-reuse probes sent for this operation (when the scenario asks for them). */
  probes?: KeyReuseProbe[];
}
