import { createHash } from 'node:crypto';

/**
 * WebCrypto's `crypto.subtle.digest` answered from node:crypto at once. The
 * real one hashes on libuv's thread pool and resolves on a later turn of the
 * event loop, which a simulated run reads as "the handler awaited something
 * outside the simulation": a service fingerprinting request bodies with
 * SHA-256 — what idempotency layers do — was reported broken (exit 2). The
 * bytes are the same; only the wait is gone (hashing takes no virtual time).
 */
const ALGORITHMS: Record<string, string> = { 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

/** The digest of `data` as an ArrayBuffer, or undefined when `algorithm` or `data` is not one this answers (the real function then answers, or rejects, as it would). */
export function digestNow(algorithm: unknown, data: unknown): ArrayBuffer | undefined {
  const name = typeof algorithm === 'string' ? algorithm : typeof algorithm === 'object' && algorithm !== null ? (algorithm as { name?: unknown }).name : undefined;
  const alg = typeof name === 'string' ? ALGORITHMS[name.toUpperCase()] : undefined;
  if (alg === undefined) return undefined;
  let bytes: Uint8Array;
  if (data instanceof ArrayBuffer) bytes = new Uint8Array(data);
  else if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  else return undefined;
  const out = createHash(alg).update(bytes).digest();
  return out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength) as ArrayBuffer;
}
