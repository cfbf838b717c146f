/**
 * Service definitions that are retrysim's own code (the built-in tracker's
 * variants). A user's service is probed for unhandled promise rejections at
 * every step (one host turn each, src/sim/rejections.ts), because Node would
 * crash its process on one; ours leave none unhandled, and the holding
 * claims' hundreds of thousands of steps should not pay a macrotask turn each.
 */
const OWN = new WeakSet<object>();

/** Marks `def` as retrysim's own code and returns it. */
export function ownService<T extends object>(def: T): T {
  OWN.add(def);
  return def;
}

/** True for a definition {@link ownService} marked. */
export function isOwnService(def: object): boolean {
  return OWN.has(def);
}
