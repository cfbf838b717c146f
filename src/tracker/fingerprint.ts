import { hash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so two bodies that differ only
 * in key order or whitespace get the same text (and so the same fingerprint).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const parts = Object.keys(obj)
    .sort()
    .filter((k) => obj[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
  return `{${parts.join(',')}}`;
}

/** SHA-256 (hex) of the canonical body: what "same request" means for a key. */
export function fingerprint(body: unknown): string {
  return hash('sha256', canonicalJson(body), 'hex');
}
