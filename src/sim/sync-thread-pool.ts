import zlib from 'node:zlib';
import nodeCrypto from 'node:crypto';
import { types } from 'node:util';
import { syncBuiltinESMExports } from 'node:module';

/**
 * node:zlib's one-shot functions (`gzip`, `gunzip`, `deflate`, `inflate`,
 * `deflateRaw`, `inflateRaw`, `unzip`, `brotliCompress`,
 * `brotliDecompress`) and node:crypto's `scrypt`, `pbkdf2` and `hkdf`,
 * answered from their Sync forms while simulated code runs. The callback
 * forms (and `util.promisify` of them) do the work on libuv's thread pool
 * and call back on a later turn of the event loop, which a simulated run
 * reads as "the handler awaited something outside the simulation": a
 * service that gzips its answers or hashes a password with scrypt was
 * reported broken (exit 2). The bytes are the Sync form's, which are the
 * same; the callback still comes on a later tick (process.nextTick reads no
 * time), with Node's errors where Node gives them: a bad argument or option
 * is thrown at the call, bad data reaches the callback.
 *
 * As for node:timers (virtual-node-timers.ts), the module functions are
 * replaced once per process, at import, before any user module loads (a
 * `promisify(gzip)` made at load wraps the dispatcher), by dispatchers that
 * act only while a registered source says simulated code runs — a service
 * handler on the kernel clock, a hosted app's instance — exactly when
 * `crypto.subtle.digest` is answered at once (sync-subtle.ts); outside,
 * they are the real functions. Streams (`zlib.createGzip()`) are left as
 * they are: they still run on the thread pool.
 */

const sources: Array<() => boolean> = [];

/** Makes `source` one of the places the dispatchers ask whether simulated code runs now. */
export function answerThreadPoolWhile(source: () => boolean): void {
  if (!sources.includes(source)) sources.push(source);
}

function simulated(): boolean {
  for (const s of sources) if (s()) return true;
  return false;
}

/** The one-shot zlib functions that have a Sync form. */
export const ZLIB_ONE_SHOT = ['gzip', 'gunzip', 'deflate', 'inflate', 'deflateRaw', 'inflateRaw', 'unzip', 'brotliCompress', 'brotliDecompress'] as const;
/** The node:crypto functions that have a Sync form and need no randomness. */
export const CRYPTO_DERIVE = ['scrypt', 'pbkdf2', 'hkdf'] as const;

type Fn = (...a: unknown[]) => unknown;
type Callback = (e: unknown, out?: unknown) => void;

/** An error the engine raised on the data (the callback form passes it to the callback); others are the arguments' (thrown at the call). */
function fromData(e: unknown): boolean {
  const x = e as { errno?: unknown; code?: unknown } | null;
  return typeof x?.errno === 'number' || x?.code === 'ERR_BUFFER_TOO_LARGE';
}

let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  const z = zlib as unknown as Record<string, Fn>;
  for (const n of ZLIB_ONE_SHOT) {
    const real = z[n]!;
    const sync = z[`${n}Sync`]!;
    z[n] = function (this: unknown, ...a: unknown[]) {
      const [input] = a;
      const cb = a[a.length - 1];
      // What Node refuses before any work (not a function, not bytes) it refuses in its own words.
      if (!simulated() || typeof cb !== 'function' || a.length < 2 || a.length > 3 || !(typeof input === 'string' || ArrayBuffer.isView(input) || types.isAnyArrayBuffer(input))) return Reflect.apply(real, this, a);
      let out: unknown;
      try {
        out = sync(input, a.length === 3 ? a[1] : undefined);
      } catch (e) {
        if (!fromData(e)) throw e;
        process.nextTick(cb as Callback, e);
        return undefined;
      }
      process.nextTick(cb as Callback, null, out);
      return undefined;
    };
  }
  const c = nodeCrypto as unknown as Record<string, Fn>;
  for (const n of CRYPTO_DERIVE) {
    const real = c[n]!;
    const sync = c[`${n}Sync`]!;
    c[n] = function (this: unknown, ...a: unknown[]) {
      const cb = a[a.length - 1];
      if (!simulated() || typeof cb !== 'function') return Reflect.apply(real, this, a);
      // Node checks every argument before the work starts and throws at the call, in both forms.
      const out = Reflect.apply(sync, nodeCrypto, a.slice(0, -1));
      process.nextTick(cb as Callback, null, out);
      return undefined;
    };
  }
  // ESM named imports of the builtins follow the module objects only after a sync.
  syncBuiltinESMExports();
}

// At import, not at the first run: a user's module loaded after this one finds the dispatchers.
install();
