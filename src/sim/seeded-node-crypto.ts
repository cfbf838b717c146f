import nodeCrypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import type { Prng } from '../random/prng.js';

/**
 * `node:crypto`'s random functions on the seeded stream of whatever
 * simulated code runs now. The fake clocks (the kernel clock for services,
 * each hosted app's instance clock, the client bridge) replace the globals —
 * `Math.random`, `crypto.randomUUID` — but code that writes
 * `import { randomUUID } from 'node:crypto'` or `crypto.randomBytes(16)`
 * (the usual way to mint ids and keys in Node) reads the module, not the
 * global, and drew real randomness: a replay then differs from its first
 * run on any answer that carries such an id.
 *
 * The module's functions are replaced once per process, when this module
 * is first imported (before any user module is loaded: the CLI, the service
 * loader and the vitest helper all import it first), by dispatchers that
 * ask each registered source for the stream of the code running now and
 * fall through to the real function when none answers (host code, the
 * CLI, a test's own setup). Once, not per run: re-syncing ESM named imports
 * (`syncBuiltinESMExports`) costs ~30 µs, a campaign runs thousands of
 * scenarios a second, and a dispatcher outside every scope is the real
 * function. Named imports see the dispatchers (the ESM bindings are synced);
 * so does CommonJS code that calls `crypto.randomBytes(…)` through the
 * module object, as compiled TypeScript does, and CommonJS code that
 * destructures it at load (`const { randomUUID } = require('crypto')`),
 * since the dispatchers are in place before it loads. Only a module loaded
 * before retrysim itself (and holding its own copy) keeps the real one.
 */

/** Answers the seeded stream of the simulated code running now, or undefined when none of its code runs. */
export type StreamSource = () => Prng | undefined;

const sources: Array<{ source: StreamSource; rank: number }> = [];
let installed = false;

/** Depth of {@link asHost} scopes open now: inside one, no simulated code is running. */
let hostDepth = 0;

/**
 * Runs `f` as host code: node:crypto's random functions are the real ones
 * inside it, whatever simulated code is running around it. For retrysim's
 * own machinery that may first run inside a run — the first module loaded
 * afresh per simulated process registers tsx's loader, which mints its id
 * with `randomUUID()`: drawn from the run's stream, it shifted every key of
 * that one run (the first per-process load of a process), so a
 * per-process counterexample replayed in a fresh process gave another
 * trace than the campaign found.
 */
export function asHost<T>(f: () => T): T {
  hostDepth++;
  try {
    return f();
  } finally {
    hostDepth--;
  }
}

function current(): Prng | undefined {
  if (hostDepth > 0) return undefined;
  for (const s of sources) {
    const rng = s.source();
    if (rng !== undefined) return rng;
  }
  return undefined;
}

/** A UUID v4 from a seeded stream (the shape crypto.randomUUID returns). */
export function uuidFrom(rng: Prng): string {
  const b = Array.from({ length: 16 }, () => rng.nextU32() & 0xff);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

function fill(rng: Prng, bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i++) bytes[i] = rng.nextU32() & 0xff;
}

/** The bytes of a typed array or buffer view, for filling in place. */
function bytesOf(v: NodeJS.ArrayBufferView | ArrayBuffer, offset = 0, size?: number): Uint8Array {
  if (v instanceof ArrayBuffer) return new Uint8Array(v, offset, size ?? v.byteLength - offset);
  return new Uint8Array(v.buffer, v.byteOffset + offset, size ?? v.byteLength - offset);
}

type Fn = (...a: never[]) => unknown;

/**
 * Makes `source` one of the places the dispatchers ask; installs them on
 * first use. Each source answers only while its own code runs. Lower ranks
 * are asked first: a service handler (rank 0) runs inside a bridged client
 * run (rank 1), and its own stream must win there.
 */
export function seedNodeCrypto(source: StreamSource, rank = 0): void {
  if (!sources.some((s) => s.source === source)) {
    sources.push({ source, rank });
    sources.sort((a, b) => a.rank - b.rank);
  }
  installDispatchers();
}

/** Puts the dispatchers on node:crypto (once; with no source registered they are the real functions). */
function installDispatchers(): void {
  if (installed) return;
  installed = true;
  const real = {
    randomUUID: nodeCrypto.randomUUID, // real-time: allowed (the real function, outside every simulated scope)
    randomBytes: nodeCrypto.randomBytes, // real-time: allowed (the real function, outside every simulated scope)
    randomFillSync: nodeCrypto.randomFillSync,
    randomFill: nodeCrypto.randomFill,
    randomInt: nodeCrypto.randomInt,
  } as Record<string, Fn>;
  const fakes: Record<string, Fn> = {
    randomUUID: ((...a: unknown[]) => { // real-time: allowed (the real function, outside every simulated scope)
      const rng = current();
      return rng === undefined ? Reflect.apply(real.randomUUID!, nodeCrypto, a) : uuidFrom(rng); // real-time: allowed (the real function, outside every simulated scope)
    }) as Fn,
    randomBytes: ((size: number, cb?: (e: Error | null, b: Buffer) => void) => { // real-time: allowed (the real function, outside every simulated scope)
      const rng = current();
      if (rng === undefined || typeof size !== 'number' || !Number.isInteger(size) || size < 0) return Reflect.apply(real.randomBytes!, nodeCrypto, cb === undefined ? [size] : [size, cb]); // real-time: allowed (the real function, outside every simulated scope)
      const b = Buffer.alloc(size);
      fill(rng, b);
      if (cb === undefined) return b;
      // The callback form answers on a later turn, as the real one does (nextTick reads no time).
      process.nextTick(cb, null, b);
      return undefined;
    }) as Fn,
    randomFillSync: ((buf: NodeJS.ArrayBufferView | ArrayBuffer, offset?: number, size?: number) => {
      const rng = current();
      if (rng === undefined) return Reflect.apply(real.randomFillSync!, nodeCrypto, [buf, offset, size].slice(0, offset === undefined ? 1 : size === undefined ? 2 : 3));
      fill(rng, bytesOf(buf, offset ?? 0, size));
      return buf;
    }) as Fn,
    randomFill: ((buf: NodeJS.ArrayBufferView | ArrayBuffer, ...rest: unknown[]) => {
      const rng = current();
      const cb = rest.pop() as (e: Error | null, b: unknown) => void;
      if (rng === undefined || typeof cb !== 'function') return Reflect.apply(real.randomFill!, nodeCrypto, [buf, ...rest, cb]);
      fill(rng, bytesOf(buf, (rest[0] as number | undefined) ?? 0, rest[1] as number | undefined));
      process.nextTick(cb, null, buf);
      return undefined;
    }) as Fn,
    randomInt: ((...a: unknown[]) => {
      const rng = current();
      const cb = typeof a[a.length - 1] === 'function' ? (a.pop() as (e: Error | null, n: number) => void) : undefined;
      const [min, max] = a.length >= 2 ? (a as [number, number]) : [0, a[0] as number];
      if (rng === undefined || !Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max <= min) return Reflect.apply(real.randomInt!, nodeCrypto, cb === undefined ? a : [...a, cb]);
      // Uniform over [min, max): the stream's double scaled; ranges are < 2^48 by node's own rule.
      const n = min + Math.floor(rng.next() * (max - min));
      if (cb === undefined) return n;
      process.nextTick(cb, null, n);
      return undefined;
    }) as Fn,
  };
  const target = nodeCrypto as unknown as Record<string, unknown>;
  // (`getRandomValues` is a non-configurable getter on the module; the global crypto's, which the clocks replace, is what code calls.)
  for (const [k, f] of Object.entries(fakes)) if (typeof real[k] === 'function') target[k] = f;
  // ESM `import { randomUUID } from 'node:crypto'` bindings follow the module object only after a sync.
  syncBuiltinESMExports();
  installWebCryptoDispatchers();
}

/**
 * The global `crypto.randomUUID` and `crypto.getRandomValues` as dispatchers
 * too. Each simulated clock replaces them while its code runs, but a module
 * that binds one when it loads (`const uuid = crypto.randomUUID.bind(crypto)`,
 * since calling an unbound copy throws) held Node's own: a retry client minting
 * keys with it drew real randomness, and two replays of one counterexample
 * file sent different keys and hashed to different traces, both exit 0.
 * The clocks' replacements still come first; the dispatchers answer a copy
 * taken before them, from the stream of the code running now.
 */
function installWebCryptoDispatchers(): void {
  const web = globalThis.crypto as (typeof globalThis.crypto & Record<string, unknown>) | undefined;
  if (web === undefined) return;
  const realUUID = web.randomUUID; // real-time: allowed (the real function, outside every simulated scope)
  const realValues = web.getRandomValues; // real-time: allowed (the real function, outside every simulated scope)
  const define = (k: string, f: Fn) => Object.defineProperty(web, k, { value: f, configurable: true, writable: true, enumerable: true });
  define('randomUUID', ((...a: unknown[]) => { // real-time: allowed (dispatcher; the real one outside every simulated scope)
    const rng = current();
    return rng === undefined ? Reflect.apply(realUUID, web, a) : uuidFrom(rng);
  }) as Fn);
  define('getRandomValues', ((a: unknown) => { // real-time: allowed (dispatcher; the real one outside every simulated scope)
    const rng = current();
    // Float arrays, DataView and non-views: Node's own answer (its refusal), as the clocks' replacements do.
    if (rng === undefined || !ArrayBuffer.isView(a) || a instanceof Float32Array || a instanceof Float64Array || a instanceof DataView) return Reflect.apply(realValues, web, [a]);
    fill(rng, bytesOf(a as NodeJS.ArrayBufferView));
    return a;
  }) as Fn);
}

// At import, not at the first run: a user's module loaded after this one
// (a service, an app, a client) then finds the dispatchers, however it takes
// the functions — see the comment at the top.
installDispatchers();
