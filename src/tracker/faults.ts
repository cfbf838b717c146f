/**
 * Fault knobs for one tracker instance, in one flat object whose defaults
 * mean *no faults*. Counters fire once per request that reaches their point
 * and decrement, while > 0. The instance keeps its own mutable copy
 * (`instance.faults`), so a simulator may re-arm a counter mid-run.
 */

/** A stall (GC pause) at a step: the request sleeps `ms` right after `step(atStep)`. */
export interface PauseFault {
  /** Step label at which to stall (must be one the variant uses). */
  atStep: string;
  /** How long the stall lasts, in ms; may exceed the lease. */
  ms: number;
  /** How many requests stall (each fires once and decrements). */
  count: number;
  /**
   * A stalled request then crashes at the variant's crash point (a stall that
   * ends in an error): the stale holder's clean-up runs after others took
   * over. Default false.
   */
  thenCrash?: boolean;
  /** A request stalls the n-th time it reaches `atStep` (1-based); default the first. */
  nth?: number;
}

/** All fault knobs. */
export interface FaultOptions {
  /** Commit, then drop the connection without a byte of response. Counter; default 0. */
  loseResponseAfterCommit: number;
  /** The handler throws at the variant's crash point → 500. Counter; default 0. */
  crashMidRequest: number;
  /** Processing time in ms, after the check/claim and before the report write. Default 0. */
  slowMs: number;
  /** Stall requests at one step. Default: none. */
  pause?: PauseFault;
  /** This instance's clock skew: its now is `env.now() + clockOffsetMs`. Default 0. */
  clockOffsetMs: number;
}

/** The defaults: no faults at all. */
export const NO_FAULTS: Readonly<FaultOptions> = Object.freeze({
  loseResponseAfterCommit: 0,
  crashMidRequest: 0,
  slowMs: 0,
  clockOffsetMs: 0,
});

function assertCount(name: string, v: number): void {
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`fault ${name} must be a non-negative integer, got ${v}`);
}

function assertMs(name: string, v: number): void {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`fault ${name} must be a non-negative number of ms, got ${v}`);
}

/**
 * Fills defaults and checks each knob; returns a fresh mutable copy (the
 * `pause` object is copied too, so the caller's options are never mutated).
 */
export function resolveFaults(partial: Partial<FaultOptions> = {}): FaultOptions {
  const f: FaultOptions = { ...NO_FAULTS, ...partial };
  if (partial.pause) f.pause = { ...partial.pause };
  assertCount('loseResponseAfterCommit', f.loseResponseAfterCommit);
  assertCount('crashMidRequest', f.crashMidRequest);
  assertMs('slowMs', f.slowMs);
  if (!Number.isFinite(f.clockOffsetMs)) throw new RangeError(`fault clockOffsetMs must be finite, got ${f.clockOffsetMs}`);
  if (f.pause) {
    assertMs('pause.ms', f.pause.ms);
    assertCount('pause.count', f.pause.count);
  }
  return f;
}

/** Fires a counter: true (and decrements) when it is > 0. */
export function fire(faults: FaultOptions, name: 'loseResponseAfterCommit' | 'crashMidRequest'): boolean {
  if (faults[name] <= 0) return false;
  faults[name] -= 1;
  return true;
}

/**
 * The error thrown by the crash_mid_request fault. The handler turns it into
 * a 500, as a real framework turns an uncaught exception into one.
 */
export class CrashFault extends Error {
  readonly point: string;

  constructor(point: string) {
    // No stack trace: the fault is an expected event that the handler turns
    // into a 500 at once, and capturing a stack cost more than the rest of
    // the request (a crash fires in many generated scenarios).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(`crash_mid_request fault fired (${point})`);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.point = point;
    this.name = 'CrashFault';
  }
}
