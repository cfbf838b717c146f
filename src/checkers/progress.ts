import type { OperationEnd, Violation } from './invariants.js';
import { plural } from '../service/noun.js';
import type { EffectId } from '../service/definition.js';

/** How one operation that had not succeeded fared in the recovery phase (src/scenario/recovery.ts). */
export interface RecoveryOutcome {
  /**
   * `found`: the query showed its report (the "outcome unknown" was only
   * unknown to the client); `success`: a resubmission got a 2xx; `refused`:
   * a non-retryable answer (422, 400, ...); `gave_up`: the budget ran out.
   */
  kind: 'found' | 'success' | 'refused' | 'gave_up';
  /** Resubmissions made (0 for `found`). */
  attempts: number;
  /** Virtual time the phase started: main end + lease + skew + 1 ms. */
  fromMs: number;
  /** The last answer or transport failure, in words. */
  last?: string;
  /** `success`: the answer's whole body (the id it acknowledges is judged like the main run's: invariants 2 and 4). */
  body?: string;
  /** `success`: the answer's headers (lower-case names), for an `operation.resultId` that reads the id from one (a Location). */
  headers?: Readonly<Record<string, string>>;
  /** The resubmissions' per-request timeout, ms (to say what a `timeout` was). */
  timeoutMs?: number;
  status?: number;
}

/** The deployment facts that decide whether a lack of progress is the service's fault. */
export interface ProgressContext {
  /** The service relies on a lease of `leaseMs` (key_atomic and its variants; a service's `progress.leased`). */
  usesLease: boolean;
  leaseMs: number;
  clientTimeoutMs: number;
  /** Processing time (the slow fault; it does not stop when the other faults do). */
  slowMs: number;
  /** Largest disagreement between two instances' clocks, ms. */
  skewMs: number;
}

/**
 * SPEC §5 invariant 5, `progress`: once the faults have stopped and every
 * lease has expired, every logical operation ends in success with exactly
 * one report. Judged after the recovery phase:
 *
 * - an operation a client saw succeed in the main run made progress (how
 *   many reports it has is invariant 1's business, judged on the main run);
 * - an operation whose report the recovery query found made progress — its
 *   "outcome unknown" was justified by the faults (lost answers, deadline);
 * - otherwise its resubmission must succeed and leave exactly one report.
 *
 * Two lacks of progress are not the service's fault and are excused: an
 * operation that deliberately sent another operation's key with a different
 * body (`reusesKey`) and was refused, and any operation of a deployment whose
 * lease breaks SPEC §3's rule (lease ≤ client timeout + processing, plus the
 * clocks' skew): there a client's own retry may take over its live request
 * and, with fencing, nobody finishes (README: safe, but a livelock) — the
 * service refuses that configuration unless built unsafe on purpose.
 */
export function checkProgress(effectsOf: (op: OperationEnd) => readonly EffectId[], ops: readonly OperationEnd[], recovery: ReadonlyMap<string, RecoveryOutcome>, ctx: ProgressContext, noun = 'report'): Violation[] {
  const out: Violation[] = [];
  const unsafeLease = ctx.usesLease && ctx.leaseMs <= ctx.clientTimeoutMs + ctx.slowMs + ctx.skewMs;
  for (const op of ops) {
    if (op.results.some((r) => r.kind === 'success')) continue;
    const rec = recovery.get(op.id);
    if (rec === undefined || rec.kind === 'found') continue; // nothing sent, or the report exists
    const n = effectsOf(op).length;
    if (rec.kind === 'success') {
      // The answer is named: a 2xx that made no effect of this operation is most often another's stored answer (an unscoped key).
      // (the status and the body, shortened: a success that made no effect says what it was given)
      const answer = rec.body === undefined ? '' : ` (${rec.last} ${rec.body.length > 120 ? `${rec.body.slice(0, 119)}…` : rec.body})`;
      if (n !== 1) out.push({ invariant: 'progress', op: op.id, detail: `the resubmission after the faults stopped succeeded${answer}, but the operation now has ${n} ${plural(noun)}` });
      continue;
    }
    if (op.reusesKey && rec.kind === 'refused') continue;
    if (unsafeLease) continue;
    // What happened, then what is: the resubmissions may well have made the effect without ever hearing so.
    const last = rec.last === 'timeout' && rec.timeoutMs !== undefined ? `timed out after ${rec.timeoutMs.toFixed(0)} ms` : rec.last;
    const what = rec.kind === 'refused'
      ? `the resubmission was refused (${rec.last})`
      : `${rec.attempts} resubmission(s) got no success, the last ${last}`;
    const exist = n === 0 ? `no ${noun} exists` : n === 1 ? `1 ${noun} exists` : `${n} ${plural(noun)} exist`;
    out.push({
      invariant: 'progress',
      op: op.id,
      // A service that declares no lease (`progress.leased: false`) has none to expire: the words say only what happened.
      detail: `no ${noun} acknowledged after the faults stopped${ctx.usesLease ? ' and every lease expired' : ''} (from t=${rec.fromMs.toFixed(0)} ms): ${what}; ${exist}`,
    });
  }
  return out;
}
