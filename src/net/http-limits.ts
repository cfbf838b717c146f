/**
 * Limits of the HTTP wire that every service shares in real mode (the
 * built-in tracker and a user's module alike): not any one service's rules.
 */

/** Largest accepted request body, in UTF-8 bytes (64 KiB); larger → 413. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * Why `value` cannot be sent as an HTTP header value (the instance name goes
 * out as `x-instance` on every answer), or null. Printable ASCII only, 1–64
 * characters: node refuses control characters and anything past Latin-1 only
 * when the answer is written — after the request has committed.
 */
export function headerValueProblem(value: string): string | null {
  if (value.length < 1 || value.length > 64) return `must be 1–64 characters, got ${value.length}`;
  const bad = /[^\x20-\x7e]/.exec(value);
  if (bad) return `may hold printable ASCII only (it is sent as an HTTP header); '${JSON.stringify(bad[0]).slice(1, -1)}' at index ${bad.index} is not`;
  return null;
}
