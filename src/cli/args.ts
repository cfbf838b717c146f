import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A bad flag or argument: printed with the command's help, exit code 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Strict flag parsing shared by every subcommand: unknown flags and bad
 * values are a {@link UsageError}; `--help`/`-h` is added to every command.
 * Returns the parsed values, or the exit code when help was printed or the
 * flags were bad, so a command body is `const a = flags(...); if (typeof a === 'number') return a;`.
 */
export function flags<O extends Options>(command: string, argv: string[], options: O, help: string, allowPositionals = false) {
  try {
    const r = parseArgs({ args: argv, strict: true, allowPositionals, options: { ...options, help: { type: 'boolean', short: 'h' } } });
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
