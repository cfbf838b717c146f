/**
 * `AbortSignal.timeout(ms)` on a simulated clock. Node's arms a timer of its
 * own inside the runtime, which no replaced global reaches: in a simulated
 * run the signal aborted after `ms` of *real* time — never, in a run that
 * takes a few milliseconds — so a request guarded by it waited its slow step
 * out, and a handler that awaited the abort was stopped as "awaited something
 * outside the simulation". Each simulated clock (the client bridge's, the
 * kernel clock's in a service handler, a hosted app's instance clock) answers
 * `AbortSignal.timeout` with this, arming the timer on itself.
 */

/** Arms `fire` after `ms` on a simulated clock (a one-shot timer). */
export type ArmTimer = (fire: () => void, ms: number) => unknown;

/**
 * A signal that aborts with Node's reason (a `TimeoutError` DOMException)
 * once `arm`'s clock has run `ms`. A delay Node refuses (not an integer in
 * 0..2^32-1) goes to `real`, which throws Node's own error.
 */
export function timeoutSignal(ms: unknown, arm: ArmTimer, real: (ms: unknown) => AbortSignal): AbortSignal {
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 0xffff_ffff) return Reflect.apply(real, AbortSignal, [ms]);
  const c = new AbortController();
  arm(() => c.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  return c.signal;
}
