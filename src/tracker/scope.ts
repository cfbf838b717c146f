/**
 * Idempotency keys are scoped by tenant and method. The scope is encoded as a
 * JSON array, which cannot collide by concatenation: tenant "a" with key
 * "b/c" and tenant "a/b" with key "c" give different strings, whatever
 * characters the key contains.
 */

/** The parts of a scoped key. */
export interface KeyScope {
  tenant: string;
  method: string;
  key: string;
}

/** Encodes `tenant + method + key` unambiguously, e.g. `["default","POST","k1"]`. */
export function scopeKey(tenant: string, method: string, key: string): string {
  return JSON.stringify([tenant, method, key]);
}

/** Inverse of {@link scopeKey}; undefined when the text is not a scoped key. */
export function unscopeKey(scoped: string): KeyScope | undefined {
  let parts: unknown;
  try {
    parts = JSON.parse(scoped);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parts) || parts.length !== 3 || !parts.every((p) => typeof p === 'string')) return undefined;
  const [tenant, method, key] = parts as [string, string, string];
  return { tenant, method, key };
}
