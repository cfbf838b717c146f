import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so equal values always
 * serialise to equal bytes (the basis of trace hashes and scenario
 * round-trips). Non-finite numbers are refused: JSON would silently turn
 * them into null and two different traces could hash alike.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === 'number' && !Number.isFinite(v)) throw new TypeError(`canonicalJson: non-finite number ${v}`);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sortKeys(x);
    }
    return out;
  }
  return v;
}

/** SHA-256 of the canonical JSON, hex. */
export function hashJson(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
