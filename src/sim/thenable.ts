/** Whether `x` is a promise or promise-like (what an `async` function returns). */
export function isThenable(x: unknown): x is PromiseLike<unknown> {
  return (typeof x === 'object' || typeof x === 'function') && x !== null && typeof (x as { then?: unknown }).then === 'function';
}

/**
 * Lets go of a promise nobody will await (a user's `async` function whose
 * result is refused): its rejection, if any, is caught here so that it does
 * not end the process as an unhandled one.
 */
export function abandon(p: PromiseLike<unknown>): void {
  p.then(undefined, () => undefined);
}
