import fs from 'node:fs';

/**
 * What a hosted app prints, dropped while its code runs (unless
 * RETRYSIM_APP_LOGS=1). `console` is not the only way out: morgan writes its
 * access log to `process.stdout.write`, and pino (Fastify's `logger: true`,
 * pino-http) to file descriptor 1 through sonic-boom's `fs.write` /
 * `fs.writeSync`. Until 2026-12 those went through to retrysim's own
 * stdout: a campaign printed thousands of access-log lines, and
 * `check --app … --json` printed them before its JSON, which then did not
 * parse.
 */

/** One property replaced while an instance is entered: `[object, key, replacement]`. */
export type OutputSwap = [object, PropertyKey, unknown];

const STDOUT = 1;
const STDERR = 2;

/** The bytes a write of `data` would have written (what a stream's writer counts on being told). */
function byteCount(data: unknown, encoding: unknown, offset?: unknown, length?: unknown): number {
  if (typeof data === 'string') return Buffer.byteLength(data, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (ArrayBuffer.isView(data)) {
    const at = typeof offset === 'number' ? offset : 0;
    return typeof length === 'number' ? length : data.byteLength - at;
  }
  return 0;
}

/** A stream's `write` that writes nothing and says it did: the callback, when given, on a later tick as a real write's. */
function quietStreamWrite(_chunk: unknown, encodingOrCb?: unknown, cb?: unknown): boolean {
  const done = typeof encodingOrCb === 'function' ? encodingOrCb : cb;
  if (typeof done === 'function') process.nextTick(done as () => void);
  return true;
}

/**
 * The replacements: `process.stdout.write`, `process.stderr.write`, and
 * `fs.write` / `fs.writeSync` for descriptors 1 and 2 (any other descriptor
 * goes to the real function: a file the app writes is not output).
 */
export function quietOutputSwaps(): OutputSwap[] {
  const realWrite = fs.write;
  const realWriteSync = fs.writeSync;
  const printed = (fd: unknown) => fd === STDOUT || fd === STDERR;
  const write = function (this: unknown, fd: unknown, data: unknown, ...rest: unknown[]) {
    if (!printed(fd)) return Reflect.apply(realWrite, this, [fd, data, ...rest]);
    const cb = rest.pop();
    // fs.write(fd, buffer, offset?, length?, position?, cb) or fs.write(fd, string, position?, encoding?, cb).
    const n = typeof data === 'string' ? byteCount(data, rest[1]) : byteCount(data, undefined, rest[0], rest[1]);
    if (typeof cb === 'function') process.nextTick(cb as (...a: unknown[]) => void, null, n, data);
    return undefined;
  };
  const writeSync = function (this: unknown, fd: unknown, data: unknown, ...rest: unknown[]) {
    if (!printed(fd)) return Reflect.apply(realWriteSync, this, [fd, data, ...rest]);
    return typeof data === 'string' ? byteCount(data, rest[1]) : byteCount(data, undefined, rest[0], rest[1]);
  };
  return [
    [process.stdout, 'write', quietStreamWrite],
    [process.stderr, 'write', quietStreamWrite],
    [fs, 'write', write],
    [fs, 'writeSync', writeSync],
  ];
}
