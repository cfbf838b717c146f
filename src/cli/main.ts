/**
 * The `retrysim` command: a thin dispatcher. Each subcommand lives in its own
 * file and exports `run(argv): Promise<number>` (the exit code), loaded
 * lazily so `retrysim --help` does not pay for SQLite or the herd model.
 */
import { readFileSync } from 'node:fs';
import { markApp } from '../service/errors.js';
import { SimLimitError } from '../sim/errors.js';
import { asksHelp } from './args.js';

type Command = { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> };

export const commands: Record<string, Command> = {
  check: { summary: 'the property campaign: generated faults and interleavings, shrunk counterexamples (the main job)', load: () => import('./check.js') },
  matrix: { summary: 'reports held per canonical scenario × write strategy/key source (SPEC §4)', load: () => import('./matrix.js') },
  replay: { summary: 'run a scenario file exactly and check its expect (exit 0 met, 1 not, 2 bad file, 3 diverged)', load: () => import('./replay.js') },
  serve: { summary: 'run the bug tracker, your service or your app over HTTP on loopback with a SQLite file (real mode)', load: () => import('./serve.js') },
  conformance: { summary: 'canonical scenarios against real server processes vs the simulation; exit 1 on any difference', load: () => import('./conformance.js') },
  flaky: { summary: 'flakiness lab: wall-clock runs with exact upper bounds vs exhaustive simulated interleavings', load: () => import('./flaky.js') },
  merge: { summary: 'merge the --out files of a sharded check into the table, --json and exit code of the unsharded run', load: () => import('./merge.js') },
  migrate: { summary: 'rewrite scenario files in the current format (re-recorded, expect re-checked)', load: () => import('./migrate.js') },
  demo: { summary: 'run a small kernel demonstration (virtual time, choices, trace hash)', load: () => import('./demo.js') },
  herd: { summary: 'the OCC thundering-herd experiment: backoff strategies × clients (SPEC §2)', load: () => import('./herd.js') },
  amplify: { summary: 'retry amplification across layers (A^L) and a retry budget / token bucket bounding it (SPEC §6)', load: () => import('./amplify.js') },
};

/** The top-level help text. */
export function usage(): string {
  const names = Object.keys(commands).sort();
  const width = Math.max(...names.map((n) => n.length));
  return [
    'retrysim — deterministic-time simulation and property testing of retries, backoff and idempotency keys',
    '',
    'Usage: retrysim <command> [options]     (retrysim <command> --help, or retrysim help <command>, for its options)',
    '       retrysim --version               the version',
    '',
    'Commands:',
    ...names.map((n) => `  ${n.padEnd(width)}  ${commands[n]!.summary}`),
  ].join('\n');
}

/** The package's version, from package.json (`retrysim --version`). */
export function version(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** Commands that take a user service: `--app PATH` names an unmodified Node app there (src/app/). */
const APP_COMMANDS = new Set(['check', 'replay', 'serve', 'conformance', 'matrix']);

/**
 * `--app PATH` is `--service PATH`: the loader recognises a module whose
 * default export is an app descriptor and hosts it through the service path.
 */
function appAsService(argv: string[]): string[] {
  // A module that cannot load is still the user's app, in the one line that says so.
  argv.forEach((a, i) => {
    if (a === '--app' && argv[i + 1] !== undefined) markApp(argv[i + 1]!);
    else if (a.startsWith('--app=')) markApp(a.slice('--app='.length));
  });
  return argv.map((a) => (a === '--app' ? '--service' : a.startsWith('--app=') ? `--service=${a.slice('--app='.length)}` : a));
}

/**
 * What is wrong with `--app` on this command line, in the flag the user
 * typed (once rewritten to `--service`, the parser would name that), or
 * undefined.
 */
function appFlagProblem(argv: string[]): string | undefined {
  const app = argv.findIndex((a) => a === '--app' || a.startsWith('--app='));
  if (app < 0) return undefined;
  if (argv[app] === '--app' && (argv[app + 1] === undefined || argv[app + 1]!.startsWith('--'))) return "Option '--app <value>' argument missing";
  if (argv.some((a) => a === '--service' || a.startsWith('--service='))) return '--app and --service both name the module to run: give one';
  return undefined;
}

/** Runs the CLI with these arguments; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '--version' || name === '-V' || name === 'version') {
    console.log(`retrysim ${version()}`);
    return 0;
  }
  if (name === 'help' && rest.length > 0) {
    // `retrysim help check` is `retrysim check --help`.
    if (rest.length > 1 || commands[rest[0]!] === undefined) {
      console.error(`retrysim help: unknown command '${rest.join(' ')}'\n\n${usage()}`);
      return 2;
    }
    return main([rest[0]!, '--help']);
  }
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const cmd = commands[name];
  if (cmd === undefined) {
    console.error(`retrysim: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  // `--app --help` asks for help (the command prints it), not about a missing path.
  // RETRYSIM_APP_PER_PROCESS is 1 or unset: any other value would silently load the app once, the opposite of what was asked.
  const perProcess = process.env.RETRYSIM_APP_PER_PROCESS;
  if (APP_COMMANDS.has(name) && perProcess !== undefined && !['', '0', '1'].includes(perProcess)) {
    console.error(`retrysim ${name}: RETRYSIM_APP_PER_PROCESS must be 1 (one module load per simulated process) or 0, got '${perProcess}'`);
    return 2;
  }
  const appProblem = APP_COMMANDS.has(name) && !asksHelp(rest) ? appFlagProblem(rest) : undefined;
  if (appProblem !== undefined) {
    console.error(`retrysim ${name}: ${appProblem} (retrysim ${name} --help lists the options)`);
    return 2;
  }
  try {
    const mod = await cmd.load();
    return await mod.run(APP_COMMANDS.has(name) ? appAsService(rest) : rest);
  } catch (e) {
    return failure(name, argv, e);
  }
}

/**
 * The last line of defence: whatever escaped a command becomes one line on
 * stderr and exit 1, never a stack trace (RETRYSIM_DEBUG=1 prints it). A
 * full disk or a closed pipe is named as such; a simulation limit names the
 * command line that reproduces it (runs are deterministic, so that line is
 * the replay).
 */
export function failure(name: string, argv: string[], e: unknown): number {
  const err = e as NodeJS.ErrnoException;
  if (process.env.RETRYSIM_DEBUG === '1') console.error(err?.stack ?? err);
  const addon = nativeAddonProblem(err?.message ?? '');
  if (addon !== undefined) {
    console.error(`retrysim ${name}: ${addon}`);
    return 2;
  }
  if (err?.syscall === 'write' && typeof err.code === 'string') {
    console.error(`retrysim ${name}: cannot write output: ${err.code}${err.code === 'ENOSPC' ? ' (no space left on device)' : ''}`);
  } else if (e instanceof SimLimitError) {
    console.error(`retrysim ${name}: the simulation hit its limit ${e.limit}=${e.value} at t=${e.timeMs.toFixed(0)} ms: ` +
      `the inputs are too large to run; reproduce: retrysim ${argv.map(shellWord).join(' ')}`);
  } else {
    console.error(`retrysim ${name}: internal error: ${err?.message ?? String(e)} (a bug in retrysim; RETRYSIM_DEBUG=1 prints the stack)`);
  }
  return 1;
}

/**
 * better-sqlite3's compiled addon missing or built for another Node: an
 * install problem, not a bug in retrysim. npm 11 skips install scripts it
 * was not told to allow, so `npm i retrysim` in a fresh folder leaves the
 * addon unbuilt (found from the packed tarball: every command then said
 * "internal error … a bug in retrysim", exit 1, the code of a failing verdict).
 */
export function nativeAddonProblem(message: string): string | undefined {
  const missing = message.includes('Could not locate the bindings file') && message.includes('better_sqlite3');
  const mismatch = /better_sqlite3\.node/.test(message) && /NODE_MODULE_VERSION|invalid ELF header|wrong ELF class/.test(message);
  if (!missing && !mismatch) return undefined;
  return `better-sqlite3's native addon ${missing ? 'is not built' : 'was built for another Node or platform'} (retrysim keeps the simulated store in SQLite): run 'npm rebuild better-sqlite3' in the project (npm 11 builds it only once allowed: 'npm install-scripts approve better-sqlite3')`;
}

/** Quotes an argument for a POSIX shell when it needs it. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:=,@%+-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`;
}
