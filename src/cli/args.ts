import { parseArgs, type ParseArgsConfig } from 'node:util';
import { accessSync, constants, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A bad flag or argument: printed with the command's help, exit code 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
/** The parseArgs configuration {@link flags} builds (named, so the published .d.ts can spell its result). */
type FlagsConfig<O extends Options> = { args: string[]; strict: true; allowPositionals: boolean; options: O & { help: { type: 'boolean'; short: 'h' } } };

/**
 * Strict flag parsing shared by every subcommand: unknown flags and bad
 * values are a {@link UsageError}; `--help`/`-h` is added to every command.
 * Returns the parsed values, or the exit code when help was printed or the
 * flags were bad, so a command body is `const a = flags(...); if (typeof a === 'number') return a;`.
 */
export function flags<O extends Options>(command: string, argv: string[], options: O, help: string, allowPositionals = false): ReturnType<typeof parseArgs<FlagsConfig<O>>> | number {
  try {
    const config: FlagsConfig<O> = { args: argv, strict: true, allowPositionals, options: { ...options, help: { type: 'boolean', short: 'h' } } };
    const r = parseArgs(config);
    if ((r.values as { help?: boolean }).help) {
      console.log(help);
      return 0;
    }
    return r;
  } catch (e) {
    console.error(`retrysim ${command}: ${(e as Error).message}\n\n${help}`);
    return 2;
  }
}

/** An integer flag: `def` when absent, a {@link UsageError} naming the flag when not an integer ≥ min. */
export function intFlag(name: string, raw: string | undefined, def: number, min = Number.MIN_SAFE_INTEGER): number {
  if (raw === undefined) return def;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`--${name} must be an integer${min > Number.MIN_SAFE_INTEGER ? ` >= ${min}` : ''}, got '${raw}'`);
  }
  return n;
}

/**
 * Checks before any work that output can go to `dir` (created if missing),
 * so a bad path fails at once with a clear message instead of after a long
 * run. A {@link UsageError} names the flag and the reason.
 */
export function writableDir(flag: string, dir: string): string {
  try {
    makeDirs(dir);
    accessSync(dir, constants.W_OK);
  } catch (e) {
    throw new UsageError(`--${flag} '${dir}' is not a writable directory (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return dir;
}

/**
 * `mkdir -p`, one level at a time: Node's own recursive mkdirSync spins
 * forever under /proc (where mkdir fails with ENOENT at every level).
 */
function makeDirs(dir: string): void {
  const abs = resolve(dir);
  if (existsSync(abs)) return;
  makeDirs(dirname(abs));
  mkdirSync(abs);
}

/** Checks before any work that `file` can be written (its directory exists and is writable). */
export function writableFile(flag: string, file: string): string {
  const dir = dirname(file);
  try {
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    accessSync(dir, constants.W_OK);
    if (existsSync(file) && statSync(file).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
  } catch (e) {
    throw new UsageError(`--${flag} '${file}' cannot be written (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return file;
}

/** Runs a command body, turning a {@link UsageError} into its message and exit code 2. */
export async function usage(command: string, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(`retrysim ${command}: ${e.message}`);
      return 2;
    }
    throw e;
  }
}
