/**
 * Effect ids as the checkers compare and print them. A service keys its rows
 * by INTEGER rowids or by text (UUIDs, ULIDs, `"ord_123"`); the checkers
 * never read either as anything but an opaque value.
 */
import type { EffectId } from './definition.js';
import { abandon, isThenable } from '../sim/thenable.js';

/** Whether `v` can be an effect id: a finite number, or a non-empty string. */
export function isEffectId(v: unknown): v is EffectId {
  return (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.length > 0);
}

/**
 * Whether two ids name one effect. `42` and `"42"` do: an INTEGER key that
 * the service answers as a JSON string (as APIs with 64-bit ids do) is the
 * row it names, not an acknowledgement of a missing one.
 */
export function sameId(a: EffectId, b: EffectId): boolean {
  return a === b || (typeof a !== typeof b && String(a) === String(b));
}

/** Whether `id` is one of `ids` (see {@link sameId}). */
export function hasId(ids: readonly EffectId[], id: EffectId): boolean {
  if (ids.includes(id)) return true;
  for (const x of ids) if (typeof x !== typeof id && String(x) === String(id)) return true;
  return false;
}

/**
 * An id in a sentence: a number as it is (`payment 7`), text quoted as keys
 * and tenants are (`order '3f2a…'`), so an empty-looking or numeric-looking
 * string reads as the string it is.
 */
export function showId(id: EffectId): string {
  return typeof id === 'number' ? String(id) : `'${id}'`;
}

/** A value a user's function returned, shown in a one-line error (clipped). */
export function valueText(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (typeof v === 'function') return 'a function';
  // An `async of(db, op)` (a query builder's execute() awaited) gave "got {}".
  if (isThenable(v)) {
    abandon(v);
    return "a Promise (an async function's result): it is called synchronously and must return the value itself — on the simulation's database (better-sqlite3) .prepare(…).all() and .get() are synchronous, where an async query builder's execute() is not";
  }
  if (typeof v === 'bigint') return `the bigint ${v}n (a better-sqlite3 safeIntegers read: return Number(id) or String(id))`;
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  if (typeof v === 'string' && v.length === 0) return 'an empty string';
  let text: string | undefined;
  try {
    text = JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
  } catch {
    text = undefined; // a cycle: fall back to the type
  }
  text ??= Object.prototype.toString.call(v);
  return text.length <= 80 ? text : `${text.slice(0, 77)}...`;
}
