/**
 * Seeded pseudo-random numbers that are identical on every machine and in
 * every process: xoshiro128** over 32-bit integer arithmetic (Math.imul and
 * unsigned shifts only), seeded through splitmix32. No floating point enters
 * the state, so the stream does not depend on the platform.
 */

/** Mixes one 32-bit word into a well-spread 32-bit word (splitmix32 finaliser). */
export function mix32(x: number): number {
  x = (x + 0x9e3779b9) | 0;
  let z = x;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** FNV-1a over a string, for turning fork labels into seed material. */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const imul = Math.imul;
const TWO_NEG_32 = 1 / 4294967296;
const TWO_NEG_53 = 1 / 9007199254740992;

/**
 * A seeded generator. `seed` is any safe integer (negative and > 2^32 are
 * fine: both halves are mixed in). Use {@link Prng.fork} to give a subsystem
 * its own stream, so adding draws in one subsystem never shifts another's.
 *
 * @example
 * const rng = new Prng(42);
 * const net = rng.fork('net');
 * rng.uniform(0.9, 1.1);
 */
export class Prng {
  /** The four state words (int32), exposed for hot loops that inline the step. */
  s0: number;
  s1: number;
  s2: number;
  s3: number;

  constructor(readonly seed: number) {
    if (!Number.isSafeInteger(seed)) throw new RangeError(`seed must be a safe integer, got ${seed}`);
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 4294967296) >>> 0;
    let x = mix32(lo ^ mix32(hi));
    // The state is kept as int32 (`| 0`), as the step leaves it: the step
    // only uses bitwise operators, which read uint32 and int32 alike, and
    // storing uint32 values above 2^31 here made the fields doubles in some
    // generators and small integers in others, deoptimising hot loops.
    this.s0 = (x = mix32(x)) | 0;
    this.s1 = (x = mix32(x)) | 0;
    this.s2 = (x = mix32(x)) | 0;
    this.s3 = (x = mix32(x)) | 0;
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /**
   * Next 32-bit unsigned integer (xoshiro128**). Written with locals and the
   * rotations spelled out so its bytecode stays small: hot loops (the herd's
   * normal draws) rely on the JIT inlining it within its size budget.
   */
  nextU32(): number {
    const s0 = this.s0;
    const s1 = this.s1;
    const s2 = this.s2 ^ s0;
    const s3 = this.s3 ^ s1;
    const m = imul(s1, 5);
    const r = imul((m << 7) | (m >>> 25), 9) >>> 0;
    this.s0 = s0 ^ s3;
    this.s1 = s1 ^ s2;
    this.s2 = s2 ^ (s1 << 9);
    this.s3 = (s3 << 11) | (s3 >>> 21);
    return r;
  }

  /**
   * The same draw as {@link nextU32}, as a signed int32 (`nextU32() | 0`).
   * For hot callers that want the bits: an int32 return value is a small
   * integer to V8 even when the call is not inlined, where a uint32 above
   * 2^31 comes back as a heap-allocated number. The step is written out
   * again rather than shared with nextU32: routing nextU32 through this cost
   * the herd ~6 % (one more inlining level under `next()`); a test keeps the
   * two streams equal.
   */
  nextI32(): number {
    const s0 = this.s0;
    const s1 = this.s1;
    const s2 = this.s2 ^ s0;
    const s3 = this.s3 ^ s1;
    const m = imul(s1, 5);
    const r = imul((m << 7) | (m >>> 25), 9) | 0;
    this.s0 = s0 ^ s3;
    this.s1 = s1 ^ s2;
    this.s2 = s2 ^ (s1 << 9);
    this.s3 = (s3 << 11) | (s3 >>> 21);
    return r;
  }

  /** Uniform double in [0, 1) with 32 bits of resolution (fast path). */
  next32(): number {
    return this.nextU32() * TWO_NEG_32;
  }

  /** Uniform double in [0, 1) with 53 bits of resolution. */
  next(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) * TWO_NEG_53;
  }

  /** Uniform double in [a, b). */
  uniform(a: number, b: number): number {
    return a + (b - a) * this.next();
  }

  /** Uniform integer in [0, n). Rejection sampling keeps it unbiased. */
  int(n: number): number {
    if (!(n >= 1) || !Number.isInteger(n) || n > 4294967296) throw new RangeError(`int(n) needs 1 <= n <= 2^32, got ${n}`);
    const limit = 4294967296 - (4294967296 % n);
    for (;;) {
      const x = this.nextU32();
      if (x < limit) return x % n;
    }
  }

  /**
   * A new generator whose stream depends only on this generator's seed and
   * the label — not on how many numbers were drawn so far — so forks are
   * stable when code elsewhere changes how much it draws.
   */
  fork(label: string): Prng {
    const h = mix32(hashString(label) ^ mix32(this.seed >>> 0)) ^ mix32(Math.floor(this.seed / 4294967296) >>> 0);
    return new Prng((h >>> 0) * 2097152 + (hashString(label + '#') & 0x1fffff));
  }

  /** A random v4-shaped UUID drawn from this stream (never from crypto). */
  uuid(): string {
    const hex = (n: number) => n.toString(16).padStart(8, '0');
    const a = hex(this.nextU32());
    const b = hex(this.nextU32());
    const c = hex(this.nextU32());
    const d = hex(this.nextU32());
    const y = ((parseInt(c[0]!, 16) & 0x3) | 0x8).toString(16);
    return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-${y}${c.slice(1, 4)}-${c.slice(4)}${d}`;
  }
}
