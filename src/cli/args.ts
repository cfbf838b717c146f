import { parseArgs, type ParseArgsConfig } from 'node:util';
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** A bad flag or argument: printed with the command's help, exit code 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;
/** A command's flag table, spelled out (node:util's own option type is not exported, so a published .d.ts could not name it). */
export type FlagTable = Record<string, { type: 'string' | 'boolean'; multiple?: boolean; short?: string }>;
/** The parseArgs configuration {@link flags} builds (named, so the published .d.ts can spell its result). */
type FlagsConfig<O extends Options> = { args: string[]; strict: true; allowPositionals: boolean; options: O & { help: { type: 'boolean'; short: 'h' } } };

/**
 * The flag table of every command that has parsed flags in this process
 * (`--help` is enough): the command-line fuzz test generates its inputs
 * from these, so a new flag is fuzzed the day it is added.
 */
export const FLAG_TABLES = new Map<string, FlagTable>();

/**
 * Strict flag parsing shared by every subcommand: unknown flags and bad
 * values are a {@link UsageError}; `--help`/`-h` is added to every command.
 * Returns the parsed values, or the exit code when help was printed or the
 * flags were bad, so a command body is `const a = flags(...); if (typeof a === 'number') return a;`.
 */
export function flags<O extends Options>(command: string, argv: string[], options: O, help: string, allowPositionals = false): ReturnType<typeof parseArgs<FlagsConfig<O>>> | number {
  FLAG_TABLES.set(command, options as FlagTable);
  // Before parsing: `check --client --help` (no path yet) is a request for
  // help, which parseArgs would read as --client's value and call ambiguous.
  if (asksHelp(argv)) {
    console.log(help);
    return 0;
  }
  try {
    const config: FlagsConfig<O> = { args: joinNegativeValues(argv, options), strict: true, allowPositionals, options: { ...options, help: { type: 'boolean', short: 'h' } } };
    const r = parseArgs(config);
    if ((r.values as { help?: boolean }).help) {
      console.log(help);
      return 0;
    }
    return r;
  } catch (e) {
    // One line naming what is wrong (node's parseArgs may say it in two or three), and where the options are: the
    // whole help page after it buried the line, and for --service its tracker examples said nothing about the user's code.
    console.error(`retrysim ${command}: ${(e as Error).message.replace(/\s*\n\s*/g, ' ')} (retrysim ${command} --help lists the options)`);
    return 2;
  }
}

/**
 * Whether `--help` or `-h` is one of the arguments (before a `--`
 * terminator), wherever it stands — also where a flag's value is missing
 * (`--service --help`): help is what the user asked for, not an error.
 */
export function asksHelp(argv: readonly string[]): boolean {
  for (const a of argv) {
    if (a === '--') return false;
    if (a === '--help' || a === '-h') return true;
  }
  return false;
}

/**
 * Rewrites `--flag -3` as `--flag=-3` for flags that take a value, so a
 * negative number is a value as users expect (node's parseArgs calls it
 * "ambiguous" otherwise) — and a printed reproduce line such as
 * `--seed -1` runs as printed.
 */
export function joinNegativeValues(argv: readonly string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined;
    if (name !== undefined && options[name]?.type === 'string' && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/**
 * An integer flag: `def` when absent, a {@link UsageError} naming the flag
 * when not an integer in [min, max].
 */
export function intFlag(name: string, raw: string | undefined, def: number, min = Number.MIN_SAFE_INTEGER, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined) return def;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer${range(min, max)}, got '${raw}'`);
  }
  return n;
}

/** A number flag (decimals and exponents allowed): `def` when absent, else a finite number in [min, max]. */
export function numFlag(name: string, raw: string | undefined, def: number, min: number, max: number): number {
  if (raw === undefined) return def;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be a number${range(min, max)}, got '${raw}'`);
  }
  return n;
}

function range(min: number, max: number): string {
  const lo = min > Number.MIN_SAFE_INTEGER;
  const hi = max < Number.MAX_SAFE_INTEGER;
  if (lo && hi) return ` from ${min} to ${max}`;
  if (lo) return ` >= ${min}`;
  if (hi) return ` <= ${max}`;
  return '';
}

/** The one seed flag of every command: any safe integer, negative ones too (default 1). */
export function seedFlag(raw: string | undefined): number {
  return intFlag('seed', raw, 1);
}

/**
 * Checks before any work that output can go to `dir`, so a bad path fails
 * at once with a clear message instead of after a long run. A
 * {@link UsageError} names the flag and the reason. The check makes the
 * missing levels (only a real mkdir tells, under /proc or on a read-only
 * mount) and removes them again: the command makes the directory when it
 * writes something there, so a command that then stops on bad input (a
 * module that does not load) leaves nothing behind.
 */
export function writableDir(flag: string, dir: string, fs: DirOps = REAL_DIR_OPS): string {
  // Several processes may check the same directory at once (the shards of a
  // campaign given one --found): one may remove the level it made between
  // another's steps, which then finds it gone (ENOENT) — check again.
  for (let attempt = 1; ; attempt++) {
    const made: string[] = [];
    try {
      if (dir === '') throw Object.assign(new Error('empty path'), { code: 'ENOENT' });
      makeDirs(dir, made, fs);
      if (!fs.stat(dir).isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      fs.access(dir);
      return dir;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && dir !== '' && attempt < DIR_CHECK_ATTEMPTS) continue;
      throw new UsageError(`--${flag} '${dir}' is not a writable directory (${code ?? (e as Error).message})`);
    } finally {
      for (const d of made.reverse()) {
        try {
          fs.rmdir(d);
        } catch {
          // Another process wrote into it, or removed it already: it is not this check's to remove now.
        }
      }
    }
  }
}

/** Checks of one directory before ENOENT is taken for an answer (under /proc every check says ENOENT). */
const DIR_CHECK_ATTEMPTS = 5;

/** The file-system calls {@link writableDir} makes (a test gives others, to play another process between them). */
export interface DirOps {
  exists(p: string): boolean;
  mkdir(p: string): void;
  stat(p: string): { isDirectory(): boolean };
  access(p: string): void;
  rmdir(p: string): void;
}

const REAL_DIR_OPS: DirOps = {
  exists: existsSync,
  mkdir: (p) => mkdirSync(p),
  stat: (p) => statSync(p),
  access: (p) => accessSync(p, constants.W_OK),
  rmdir: rmdirSync,
};

/**
 * `mkdir -p`, one level at a time (each level made is pushed on `made`):
 * Node's own recursive mkdirSync spins forever under /proc (where mkdir
 * fails with ENOENT at every level). A level another process made first
 * (EEXIST) is there, and not this one's to remove.
 */
function makeDirs(dir: string, made: string[], fs: DirOps): void {
  const abs = resolve(dir);
  if (fs.exists(abs)) return;
  makeDirs(dirname(abs), made, fs);
  try {
    fs.mkdir(abs);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw e;
  }
  made.push(abs);
}

/**
 * Checks before any work that `file` can be written, by opening it for
 * writing (and removing it again when the probe created it): permission
 * bits say nothing to root, and /proc or a read-only mount only fail on open.
 */
export function writableFile(flag: string, file: string): string {
  try {
    if (file === '') throw Object.assign(new Error('empty path'), { code: 'ENOENT' });
    if (existsSync(file)) {
      if (statSync(file).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
      closeSync(openSync(file, 'r+'));
    } else {
      closeSync(openSync(file, 'wx'));
      unlinkSync(file);
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A missing folder is the usual ENOENT: name it (a bare code sent users looking at the file name).
    const folder = dirname(file);
    const why = code === 'ENOENT' && file !== '' && !existsSync(folder) ? `ENOENT: there is no folder ${folder}` : code ?? (e as Error).message;
    throw new UsageError(`--${flag} '${file}' cannot be written (${why})`);
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
