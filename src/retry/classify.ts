/**
 * Which failures may be retried (SPEC §6), as a pure function of the gRPC
 * status and what the caller knows about the call. The answer carries a
 * reason in a sentence so a report or a trace can say *why* a retry did or
 * did not happen.
 */

/** The seventeen gRPC status codes, by their canonical names. */
export const GRPC_CODES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;

/** A gRPC status code name, e.g. `'UNAVAILABLE'`. */
export type GrpcCode = (typeof GRPC_CODES)[number];

/** True when `s` is one of {@link GRPC_CODES}. */
export function isGrpcCode(s: string): s is GrpcCode {
  return (GRPC_CODES as readonly string[]).includes(s);
}

/**
 * What the caller knows when it classifies one failed attempt. Every field
 * defaults to the cautious answer (no budget, not idempotent, no key, not
 * re-read, not proven transient), so a forgotten field never causes a retry.
 */
export interface ClassifyContext {
  /**
   * The caller's budget allows another attempt: deadline time left (see
   * {@link MIN_ATTEMPT_MS}) and, where one is used, a retry budget or token
   * bucket not exhausted. Default false.
   */
  budgetLeft?: boolean;
  /** The operation is idempotent by nature (a read, a PUT of a whole value). Default false. */
  idempotent?: boolean;
  /** The request carries an idempotency key that the server deduplicates on. Default false. */
  keyed?: boolean;
  /**
   * The server's retry information on RESOURCE_EXHAUSTED (gRPC RetryInfo /
   * `grpc-retry-pushback-ms`): a delay in ms ≥ 0 to wait before retrying,
   * or a negative number meaning "do not retry". Undefined: the server said
   * nothing, and the caller's own backoff applies.
   */
  pushbackMs?: number;
  /** ABORTED: the caller has re-read the current state and rebuilt the request from it. Default false. */
  reread?: boolean;
  /** INTERNAL/UNKNOWN: this failure is known to be transient (e.g. a documented retryable fault). Default false. */
  provenTransient?: boolean;
}

/** The classifier's answer: retry or not, why, and any server-imposed wait. */
export interface RetryDecision {
  readonly retry: boolean;
  /** One sentence: why. */
  readonly reason: string;
  /** A wait the server asked for (RESOURCE_EXHAUSTED pushback), ms; replaces the caller's backoff. */
  readonly delayMs?: number;
}

const yes = (reason: string, delayMs?: number): RetryDecision => (delayMs === undefined ? { retry: true, reason } : { retry: true, reason, delayMs });
const no = (reason: string): RetryDecision => ({ retry: false, reason });

/**
 * Classifies one failed gRPC attempt (SPEC §6):
 *
 * | code | retry? |
 * |---|---|
 * | `UNAVAILABLE` | yes, if budget left **and** (idempotent or keyed) |
 * | `RESOURCE_EXHAUSTED` | yes, honouring the server's retry info (its delay replaces ours; a negative pushback means no) |
 * | `DEADLINE_EXCEEDED` | only with budget left — and, like UNAVAILABLE, only if idempotent or keyed |
 * | `ABORTED` | only after re-reading the state the request was built from |
 * | `INTERNAL`, `UNKNOWN` | no, unless proven transient **and** idempotent |
 * | `INVALID_ARGUMENT`, `NOT_FOUND`, `PERMISSION_DENIED`, `UNAUTHENTICATED`, `FAILED_PRECONDITION`, `UNIMPLEMENTED`, `DATA_LOSS` | never |
 *
 * Choices where SPEC §6 is silent, written down here: `DEADLINE_EXCEEDED`
 * also needs idempotent-or-keyed, because the attempt may have committed
 * before the deadline ran out (SPEC §4's scenarios 4 and 5 are exactly that);
 * `OK` is not a failure (no retry); `CANCELLED` is never retried (the caller
 * asked to stop); `ALREADY_EXISTS` and `OUT_OF_RANGE` are never retried (the
 * same request gets the same answer until someone changes the state).
 *
 * @example
 * classifyGrpc('UNAVAILABLE', { budgetLeft: true, keyed: true }).retry // true
 * classifyGrpc('UNAVAILABLE', { budgetLeft: true }).reason // '… neither idempotent nor keyed …'
 */
export function classifyGrpc(code: GrpcCode, ctx: ClassifyContext = {}): RetryDecision {
  const budget = ctx.budgetLeft === true;
  const safe = ctx.idempotent === true || ctx.keyed === true;
  switch (code) {
    case 'UNAVAILABLE':
      if (!budget) return no('UNAVAILABLE is transient, but no budget is left for another attempt');
      if (!safe) return no('UNAVAILABLE may follow a committed write; the call is neither idempotent nor keyed, so a retry could duplicate it');
      return yes(`UNAVAILABLE is transient; budget left and the call is ${ctx.keyed === true ? 'keyed' : 'idempotent'}`);
    case 'RESOURCE_EXHAUSTED': {
      const p = ctx.pushbackMs;
      if (p === undefined) return yes('RESOURCE_EXHAUSTED: the server gave no retry info; retry after our own backoff');
      if (!(p >= 0)) return no('RESOURCE_EXHAUSTED: the server said not to retry (negative pushback)');
      return yes(`RESOURCE_EXHAUSTED: retry after the server's ${p} ms`, p);
    }
    case 'DEADLINE_EXCEEDED':
      if (!budget) return no('DEADLINE_EXCEEDED and no budget left: another attempt would also run out of time');
      if (!safe) return no('DEADLINE_EXCEEDED leaves the outcome unknown; the call is neither idempotent nor keyed, so a retry could duplicate it');
      return yes('DEADLINE_EXCEEDED with budget left; the call is safe to repeat');
    case 'ABORTED':
      if (ctx.reread !== true) return no('ABORTED (a conflict): retry only after re-reading the current state; resending the stale request would conflict again');
      return yes('ABORTED: the state was re-read, so the rebuilt request may be sent');
    case 'INTERNAL':
    case 'UNKNOWN':
      if (ctx.provenTransient === true && ctx.idempotent === true) return yes(`${code}: proven transient and the call is idempotent`);
      return no(`${code} is not retried unless proven transient and idempotent`);
    case 'INVALID_ARGUMENT':
    case 'NOT_FOUND':
    case 'PERMISSION_DENIED':
    case 'UNAUTHENTICATED':
    case 'FAILED_PRECONDITION':
    case 'UNIMPLEMENTED':
    case 'DATA_LOSS':
      return no(`${code} is never retried: the same request gets the same answer`);
    case 'ALREADY_EXISTS':
    case 'OUT_OF_RANGE':
      return no(`${code} is never retried: nothing changes until the state does`);
    case 'CANCELLED':
      return no('CANCELLED is never retried: the caller asked to stop');
    case 'OK':
      return no('OK is not a failure');
  }
}

/**
 * Delivery semantics of a client–server pair (SPEC §6). What a caller gets
 * is decided by whether it retries and whether the server deduplicates.
 */
export const DeliverySemantics = {
  /** No retry: an operation runs zero or one times; a lost answer means a lost operation. */
  AtMostOnce: 'at-most-once',
  /** Retry until acknowledged: an operation runs one or more times; duplicates are possible. */
  AtLeastOnce: 'at-least-once',
  /** At-least-once delivery plus an idempotency key and a dedup store: runs many times, takes effect once. */
  EffectivelyOnce: 'effectively-once',
} as const;

/** One of {@link DeliverySemantics}' values. */
export type DeliverySemantics = (typeof DeliverySemantics)[keyof typeof DeliverySemantics];

/**
 * The semantics a configuration gives: no retries → at-most-once; retries
 * without a key *and* a server-side dedup store → at-least-once; retries
 * with both → effectively-once.
 */
export function deliverySemantics(c: { retries: boolean; keyed: boolean; dedupStore: boolean }): DeliverySemantics {
  if (!c.retries) return DeliverySemantics.AtMostOnce;
  return c.keyed && c.dedupStore ? DeliverySemantics.EffectivelyOnce : DeliverySemantics.AtLeastOnce;
}

/** Least deadline time (ms) worth starting another attempt with (SPEC §6). */
export const MIN_ATTEMPT_MS = 50;
