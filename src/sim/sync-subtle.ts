import { constants, createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, KeyObject, pbkdf2Sync, sign as signNow, timingSafeEqual, verify as verifyNow, type webcrypto } from 'node:crypto';

type CryptoKey = webcrypto.CryptoKey;
type KeyUsage = webcrypto.KeyUsage;
type HmacKeyAlgorithm = webcrypto.HmacKeyAlgorithm;
type AesKeyAlgorithm = webcrypto.AesKeyAlgorithm;
/** The global CryptoKey class (Node 20 has it as a global; the DOM typings this project leaves out declare it). */
const CryptoKeyClass = (globalThis as unknown as { CryptoKey: abstract new () => CryptoKey }).CryptoKey;

/**
 * WebCrypto's deterministic `crypto.subtle` calls answered at once from
 * node:crypto. The real ones run on libuv's thread pool and resolve on a
 * later turn of the event loop, which a simulated run reads as "the handler
 * awaited something outside the simulation": a service fingerprinting
 * request bodies with SHA-256 (what idempotency layers do), signing a
 * webhook with HMAC or sealing a token with AES-GCM was reported broken
 * (exit 2). The bytes are the same; only the wait is gone (the work takes
 * no virtual time).
 *
 * Answered: `digest` (SHA-1/256/384/512); `sign`/`verify` with HMAC,
 * Ed25519 and RSASSA-PKCS1-v1_5 (all deterministic), and `verify` with
 * RSA-PSS and ECDSA (checking a JWT or a webhook's signature); `encrypt`/`decrypt` with AES-GCM, AES-CBC
 * and AES-CTR (the caller gives the IV or counter, usually from
 * `crypto.getRandomValues`, which is seeded in a simulation); `deriveBits`
 * and `deriveKey` with PBKDF2 and HKDF. `importKey` and `exportKey` of
 * secret keys already answer without the thread pool. Whatever needs real
 * randomness (generateKey, signing with ECDSA or RSA-PSS, RSA-OAEP) is left
 * to the real function, and so is every call this does not fully recognise
 * (a wrong key, usage or parameter): the real one rejects it as it would.
 */

/** The methods this answers. */
export const PROMPT_SUBTLE = ['digest', 'sign', 'verify', 'encrypt', 'decrypt', 'deriveBits', 'deriveKey'] as const;
export type PromptSubtleMethod = (typeof PROMPT_SUBTLE)[number];

const HASHES: Record<string, { node: string; blockBits: number; bytes: number }> = {
  'SHA-1': { node: 'sha1', blockBits: 512, bytes: 20 },
  'SHA-256': { node: 'sha256', blockBits: 512, bytes: 32 },
  'SHA-384': { node: 'sha384', blockBits: 1024, bytes: 48 },
  'SHA-512': { node: 'sha512', blockBits: 1024, bytes: 64 },
};

type Fn = (...a: unknown[]) => unknown;
type Answer = { value: unknown } | { error: unknown };

/** An algorithm identifier's name (a string, or an object's `name`), upper-cased as WebCrypto compares them. */
function nameOf(a: unknown): string | undefined {
  const n = typeof a === 'string' ? a : typeof a === 'object' && a !== null ? (a as { name?: unknown }).name : undefined;
  return typeof n === 'string' ? n.toUpperCase() : undefined;
}

function hashOf(a: unknown): (typeof HASHES)[string] | undefined {
  const n = nameOf(a);
  return n === undefined ? undefined : HASHES[n];
}

/** The bytes of a BufferSource, or undefined when `x` is none. */
function bytesOf(x: unknown): Uint8Array | undefined {
  if (x instanceof ArrayBuffer) return new Uint8Array(x);
  if (ArrayBuffer.isView(x)) return new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
  return undefined;
}

function arrayBuffer(b: Uint8Array): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

/** `key` is a CryptoKey of `algorithm` that allows `usage`: what WebCrypto checks before any work. */
function usable(key: unknown, algorithm: string, usage: string): key is CryptoKey {
  return key instanceof CryptoKeyClass && key.algorithm.name.toUpperCase() === algorithm && key.usages.includes(usage as KeyUsage);
}

/** The failure WebCrypto reports for a decryption that does not authenticate or unpad. */
function operationError(cause: unknown): DOMException {
  return new DOMException('The operation failed for an operation-specific reason', { name: 'OperationError', cause });
}

function sign(method: 'sign' | 'verify', [alg, key, a, b]: unknown[]): Answer | undefined {
  const name = nameOf(alg);
  if (name === undefined || !usable(key, name, method)) return undefined;
  const data = bytesOf(method === 'sign' ? a : b);
  const sig = method === 'verify' ? bytesOf(a) : undefined;
  if (data === undefined || (method === 'verify' && sig === undefined)) return undefined;
  if (name === 'HMAC') {
    const hash = hashOf((key.algorithm as HmacKeyAlgorithm).hash);
    if (hash === undefined) return undefined;
    const mac = createHmac(hash.node, KeyObject.from(key)).update(data).digest();
    return { value: method === 'sign' ? arrayBuffer(mac) : sig!.length === mac.length && timingSafeEqual(sig!, mac) };
  }
  if (key.type !== (method === 'sign' ? 'private' : 'public')) return undefined;
  if (name === 'ED25519') {
    return { value: method === 'sign' ? arrayBuffer(signNow(null, data, KeyObject.from(key))) : verifyNow(null, data, KeyObject.from(key), sig!) };
  }
  // RSASSA-PKCS1-v1_5 signs deterministically; RSA-PSS and ECDSA draw a salt or nonce to sign, so only their verify is answered.
  const keyHash = hashOf((key.algorithm as { hash?: unknown }).hash);
  if (name === 'RSASSA-PKCS1-V1_5' && keyHash !== undefined) {
    return { value: method === 'sign' ? arrayBuffer(signNow(keyHash.node, data, KeyObject.from(key))) : verifyNow(keyHash.node, data, KeyObject.from(key), sig!) };
  }
  if (method === 'verify' && name === 'RSA-PSS' && keyHash !== undefined) {
    const saltLength = (alg as { saltLength?: unknown }).saltLength;
    if (typeof saltLength !== 'number' || !Number.isInteger(saltLength) || saltLength < 0) return undefined;
    return { value: verifyNow(keyHash.node, data, { key: KeyObject.from(key), padding: RSA_PKCS1_PSS_PADDING, saltLength }, sig!) };
  }
  const hash = hashOf((alg as { hash?: unknown }).hash);
  if (method === 'verify' && name === 'ECDSA' && hash !== undefined) {
    // WebCrypto's ECDSA signatures are r || s (IEEE P1363), not DER.
    return { value: verifyNow(hash.node, data, { key: KeyObject.from(key), dsaEncoding: 'ieee-p1363' }, sig!) };
  }
  return undefined;
}

const { RSA_PKCS1_PSS_PADDING } = constants;

const GCM_TAGS = [32, 64, 96, 104, 112, 120, 128];

/** AES-GCM/CBC/CTR with the caller's IV or counter: the same bytes as WebCrypto, failures as its OperationError. */
function cipher(method: 'encrypt' | 'decrypt', [alg, key, d]: unknown[]): Answer | undefined {
  const name = nameOf(alg);
  const data = bytesOf(d);
  if (name === undefined || data === undefined || !usable(key, name, method)) return undefined;
  const p = alg as { iv?: unknown; counter?: unknown; length?: unknown; additionalData?: unknown; tagLength?: unknown };
  const bits = (key.algorithm as AesKeyAlgorithm).length;
  const k = KeyObject.from(key);
  if (name === 'AES-GCM') {
    const iv = bytesOf(p.iv);
    const tagBits = p.tagLength ?? 128;
    const aad = p.additionalData === undefined ? undefined : bytesOf(p.additionalData);
    if (iv === undefined || iv.length === 0 || !GCM_TAGS.includes(tagBits as number) || (p.additionalData !== undefined && aad === undefined)) return undefined;
    const tagBytes = (tagBits as number) / 8;
    if (method === 'encrypt') {
      const c = createCipheriv(`aes-${bits}-gcm` as 'aes-256-gcm', k, iv, { authTagLength: tagBytes });
      if (aad !== undefined) c.setAAD(aad);
      return { value: arrayBuffer(Buffer.concat([c.update(data), c.final(), c.getAuthTag()])) };
    }
    if (data.length < tagBytes) return undefined; // WebCrypto's own "data is too small" (it rejects at once)
    const c = createDecipheriv(`aes-${bits}-gcm` as 'aes-256-gcm', k, iv, { authTagLength: tagBytes });
    c.setAuthTag(data.subarray(data.length - tagBytes));
    if (aad !== undefined) c.setAAD(aad);
    return finish(c, data.subarray(0, data.length - tagBytes));
  }
  if (name === 'AES-CBC') {
    const iv = bytesOf(p.iv);
    if (iv?.length !== 16) return undefined;
    return finish(method === 'encrypt' ? createCipheriv(`aes-${bits}-cbc`, k, iv) : createDecipheriv(`aes-${bits}-cbc`, k, iv), data);
  }
  if (name === 'AES-CTR') {
    const counter = bytesOf(p.counter);
    const width = p.length;
    if (counter?.length !== 16 || typeof width !== 'number' || !Number.isInteger(width) || width < 1 || width > 128) return undefined;
    // WebCrypto wraps only the low `length` bits of the counter; OpenSSL's CTR
    // carries into the whole block. They agree while the counter does not wrap.
    const low = BigInt(`0x${Buffer.from(counter).toString('hex')}`) & ((1n << BigInt(width)) - 1n);
    if (low + BigInt(Math.ceil(data.length / 16)) > 1n << BigInt(width)) return undefined;
    return finish(method === 'encrypt' ? createCipheriv(`aes-${bits}-ctr`, k, counter) : createDecipheriv(`aes-${bits}-ctr`, k, counter), data);
  }
  return undefined;
}

function finish(c: { update(d: Uint8Array): Buffer; final(): Buffer }, data: Uint8Array): Answer {
  try {
    return { value: arrayBuffer(Buffer.concat([c.update(data), c.final()])) };
  } catch (e) {
    return { error: operationError(e) };
  }
}

/** PBKDF2 or HKDF bits of `length` from `key`, when it allows `usage`. */
function derive([alg, key, length]: unknown[], usage: 'deriveBits' | 'deriveKey'): Uint8Array | undefined {
  const name = nameOf(alg);
  const hash = hashOf((alg as { hash?: unknown } | undefined)?.hash);
  const salt = bytesOf((alg as { salt?: unknown } | undefined)?.salt);
  if (name === undefined || hash === undefined || salt === undefined || !usable(key, name, usage)) return undefined;
  if (typeof length !== 'number' || !Number.isInteger(length) || length <= 0 || length % 8 !== 0) return undefined;
  if (name === 'PBKDF2') {
    const iterations = (alg as { iterations?: unknown }).iterations;
    if (typeof iterations !== 'number' || !Number.isInteger(iterations) || iterations <= 0) return undefined;
    return pbkdf2Sync(KeyObject.from(key).export(), salt, iterations, length / 8, hash.node);
  }
  if (name === 'HKDF') {
    const info = bytesOf((alg as { info?: unknown }).info);
    if (info === undefined || length / 8 > 255 * hash.bytes) return undefined;
    return new Uint8Array(hkdfSync(hash.node, KeyObject.from(key), salt, info, length / 8));
  }
  return undefined;
}

/** The length in bits a derived key of `type` takes (AES: its length; HMAC: its length, else its hash's block), or undefined. */
function keyBits(type: unknown): number | undefined {
  const name = nameOf(type);
  const t = type as { length?: unknown; hash?: unknown };
  if (name !== undefined && name.startsWith('AES-')) return t.length === 128 || t.length === 192 || t.length === 256 ? t.length : undefined;
  if (name === 'HMAC') return t.length === undefined ? hashOf(t.hash)?.blockBits : typeof t.length === 'number' ? t.length : undefined;
  return undefined;
}

function answerNow(method: PromptSubtleMethod, args: unknown[]): Answer | undefined {
  switch (method) {
    case 'digest': {
      const out = digestNow(args[0], args[1]);
      return out === undefined ? undefined : { value: out };
    }
    case 'sign':
    case 'verify':
      return sign(method, args);
    case 'encrypt':
    case 'decrypt':
      return cipher(method, args);
    case 'deriveBits': {
      const bits = derive(args, 'deriveBits');
      return bits === undefined ? undefined : { value: arrayBuffer(bits) };
    }
    case 'deriveKey': {
      const [alg, key, type, extractable, usages] = args;
      const length = keyBits(type);
      const bits = length === undefined ? undefined : derive([alg, key, length], 'deriveKey');
      // importKey of a secret key answers without the thread pool; it checks `type` and the usages as deriveKey would.
      return bits === undefined ? undefined : { value: globalThis.crypto.subtle.importKey('raw', bits, type as AesKeyAlgorithm, extractable as boolean, usages as KeyUsage[]) };
    }
  }
}

/** The digest of `data` as an ArrayBuffer, or undefined when `algorithm` or `data` is not one this answers (the real function then answers, or rejects, as it would). */
function digestNow(algorithm: unknown, data: unknown): ArrayBuffer | undefined {
  const hash = hashOf(algorithm);
  const bytes = bytesOf(data);
  if (hash === undefined || bytes === undefined) return undefined;
  return arrayBuffer(createHash(hash.node).update(bytes).digest());
}

/**
 * A `crypto.subtle[method]` that answers at once while `active()` (simulated
 * code runs) and otherwise, or for a call it does not answer, calls `real()`.
 */
export function promptSubtle(method: PromptSubtleMethod, active: () => boolean, real: () => unknown): Fn {
  return function (this: unknown, ...args: unknown[]) {
    let out: Answer | undefined;
    if (active()) {
      try {
        out = answerNow(method, args);
      } catch {
        out = undefined; // node:crypto refused something WebCrypto may take differently: the real one says what
      }
    }
    if (out === undefined) return Reflect.apply(real() as Fn, globalThis.crypto.subtle, args);
    return 'error' in out ? Promise.reject(out.error) : Promise.resolve(out.value);
  };
}
