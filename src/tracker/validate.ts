import { z } from 'zod';
import { MAX_BODY_BYTES } from '../net/http-limits.js';

/**
 * Request validation. Everything here runs before any strategy, so bad input
 * never writes anything. Failures are values carrying the status and a
 * message that names the offending field.
 */

// The wire's limits are every service's, not the tracker's own: they live in src/net/.
export { MAX_BODY_BYTES, headerValueProblem } from '../net/http-limits.js';

/** Shortest accepted idempotency key, in characters (code points; over HTTP the header's bytes are read as UTF-8). */
export const KEY_LENGTH_MIN = 1;
/** Longest accepted idempotency key, in characters (code points). */
export const KEY_LENGTH_MAX = 255;
/** Tenant used when the request carries no `x-tenant` header. */
export const DEFAULT_TENANT = 'default';

/**
 * The body of `POST /reports`. All four fields are strings; `steps` is one
 * string (the steps to reproduce as text, newlines allowed), not an array.
 * `run_id`, `module` and `title` must be non-empty; `steps` may be empty.
 * Unknown fields are rejected so that the fingerprint covers the whole body.
 */
export interface ReportInput {
  run_id: string;
  module: string;
  title: string;
  steps: string;
}

/** A validation result: the value, or the status and message to answer with. */
export type Validated<T> = { ok: true; value: T } | { ok: false; status: 400 | 413 | 415; error: string };

const reportSchema = z.strictObject({
  run_id: z.string().min(1),
  module: z.string().min(1),
  title: z.string().min(1),
  steps: z.string(),
});

function fail(status: 400 | 413 | 415, error: string): { ok: false; status: 400 | 413 | 415; error: string } {
  return { ok: false, status, error };
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Turns one zod issue into a sentence that names the field. */
function describeIssue(issue: z.core.$ZodIssue, data: unknown): string {
  if (issue.code === 'unrecognized_keys') return `unknown field(s): ${issue.keys.map((k) => `'${k}'`).join(', ')}`;
  const field = issue.path[0];
  if (field === undefined) return `body must be a JSON object, got ${typeName(data)}`;
  const name = String(field);
  const value = (data as Record<string, unknown>)[name];
  if (value === undefined) return `missing field '${name}'`;
  if (issue.code === 'invalid_type') return `field '${name}' must be a string, got ${typeName(value)}`;
  if (issue.code === 'too_small') return `field '${name}' must not be empty`;
  return `field '${name}': ${issue.message}`;
}

/** Validates the raw body of `POST /reports`: size (413), JSON (400), fields (400). */
export function validateReportBody(body: string): Validated<ReportInput> {
  // Cheap length test first: a UTF-16 string never has more UTF-8 bytes than 3 × its length.
  if (body.length * 3 > MAX_BODY_BYTES && Buffer.byteLength(body, 'utf8') > MAX_BODY_BYTES) {
    return fail(413, `body is ${Buffer.byteLength(body, 'utf8')} bytes; the limit is ${MAX_BODY_BYTES}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch (e) {
    return fail(400, `malformed JSON body: ${(e as Error).message}`);
  }
  const parsed = reportSchema.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data };
  return fail(400, parsed.error.issues.map((i) => describeIssue(i, data)).join('; '));
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Validates the `idempotency-key` header: absent → null (no key); else 1–255 characters. */
export function validateKey(raw: string | undefined): Validated<string | null> {
  if (raw === undefined) return { ok: true, value: null };
  // A string of 1–255 UTF-16 units has 1–255 code points: no need to count.
  if (raw.length >= KEY_LENGTH_MIN && raw.length <= KEY_LENGTH_MAX) return { ok: true, value: raw };
  const n = codePoints(raw);
  if (n < KEY_LENGTH_MIN || n > KEY_LENGTH_MAX) {
    return fail(400, `header 'idempotency-key' must be ${KEY_LENGTH_MIN}–${KEY_LENGTH_MAX} characters, got ${n}`);
  }
  return { ok: true, value: raw };
}

/** Validates the `x-tenant` header: absent → `"default"`; else 1–255 characters. */
export function validateTenant(raw: string | undefined): Validated<string> {
  if (raw === undefined) return { ok: true, value: DEFAULT_TENANT };
  if (raw.length >= 1 && raw.length <= 255) return { ok: true, value: raw }; // see validateKey
  const n = codePoints(raw);
  if (n < 1 || n > 255) return fail(400, `header 'x-tenant' must be 1–255 characters, got ${n}`);
  return { ok: true, value: raw };
}

/**
 * Validates the `content-type` of `POST /reports`: the body is JSON, so the
 * type must say so — `application/json`, optionally with `charset=utf-8`
 * (any case). Anything else, or no type at all, is 415 and writes nothing:
 * a form post or a `text/plain` body is a client mistake worth hearing about,
 * not something to guess at.
 */
const JSON_TYPE: Validated<'json'> = Object.freeze({ ok: true, value: 'json' });

export function validateContentType(raw: string | undefined): Validated<'json'> {
  if (raw === undefined) return fail(415, "missing header 'content-type': send the body as application/json");
  if (raw === 'application/json') return JSON_TYPE; // what every client sends: no parsing
  const [type, ...params] = raw.split(';').map((p) => p.trim().toLowerCase());
  if (type !== 'application/json') return fail(415, `content-type '${raw}' is not supported: send the body as application/json`);
  for (const p of params) {
    const m = /^charset\s*=\s*"?([^"]*)"?$/.exec(p);
    if (m && m[1] !== 'utf-8' && m[1] !== 'utf8') return fail(415, `charset '${m[1]}' is not supported: the body must be UTF-8`);
  }
  return { ok: true, value: 'json' };
}
