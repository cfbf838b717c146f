import type { AttemptRecord, HarnessResult } from '../harness/client.js';
import type { KeySource } from '../harness/keys.js';
import type { Store } from '../tracker/store.js';

/** The invariants of SPEC §5, by name (`progress`, invariant 5, is judged by checkers/progress.ts; `key-reuse` by the key-reuse probe of a user service). */
export type Invariant = 'exactly-one' | 'id-exists' | 'stable-key' | 'tenant-isolation' | 'progress' | 'key-reuse';

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

/**
 * Judges SPEC §5's invariants from the end state (the database) and the
 * clients' records. Checkers only read; they never inject faults.
 */
export function checkInvariants(store: Store, ops: readonly OperationEnd[]): { reports: Record<string, number>; violations: Violation[] } {
  const violations: Violation[] = [];
  const reports: Record<string, number> = {};
  for (const op of ops) {
    // Ids only: a checker needs which reports exist, not their contents.
    const ids = store.reportIdsForRun(op.runId, op.tenant);
    reports[op.id] = ids.length;
    const sawSuccess = op.results.some((r) => r.kind === 'success');
    // 1. exactly one report: never two, and not zero once the client saw success.
    if (ids.length > 1) {
      violations.push({ invariant: 'exactly-one', op: op.id, detail: `${ids.length} reports (ids ${ids.join(', ')}) for one logical operation` });
    } else if (ids.length === 0 && sawSuccess) {
      violations.push({ invariant: 'exactly-one', op: op.id, detail: 'the client was told it succeeded, but no report exists' });
    }
    // 2 and 4. Every report id handed to the client exists and is this operation's.
    for (const a of op.attempts) {
      if (a.reportId === undefined || ids.includes(a.reportId)) continue; // exists, and is this operation's
      const owner = store.ownerOfReport(a.reportId);
      if (owner === undefined) {
        violations.push({ invariant: 'id-exists', op: op.id, detail: `attempt ${a.toolUseId}#${a.attempt} was given report id ${a.reportId}, which does not exist` });
      } else if (owner.tenant !== op.tenant) {
        violations.push({ invariant: 'tenant-isolation', op: op.id, detail: `tenant '${op.tenant}' received report ${a.reportId} of tenant '${owner.tenant}'` });
      } else {
        violations.push({ invariant: 'id-exists', op: op.id, detail: `report ${a.reportId} belongs to run '${owner.run_id}', not '${op.runId}'` });
      }
    }
    // 3. Within one tool call, every attempt carried the same key.
    if (op.keySource !== 'none') {
      const byCall = new Map<string, Set<string | undefined>>();
      for (const a of op.attempts) {
        const s = byCall.get(a.toolUseId) ?? new Set();
        s.add(a.key);
        byCall.set(a.toolUseId, s);
      }
      for (const [call, keys] of byCall) {
        if (keys.size > 1) violations.push({ invariant: 'stable-key', op: op.id, detail: `tool call ${call} sent ${keys.size} different keys across its attempts` });
      }
    }
  }
  return { reports, violations };
}
