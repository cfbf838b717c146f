/**
 * The `retrysim` command: a thin dispatcher. Each subcommand lives in its own
 * file and exports `run(argv): Promise<number>` (the exit code), loaded
 * lazily so `retrysim --help` does not pay for SQLite or the herd model.
 */
type Command = { summary: string; load: () => Promise<{ run(argv: string[]): Promise<number> }> };

const commands: Record<string, Command> = {
  check: { summary: 'the property campaign: generated faults and interleavings, shrunk counterexamples (the main job)', load: () => import('./check.js') },
  matrix: { summary: 'reports held per canonical scenario × write strategy/key source (SPEC §4)', load: () => import('./matrix.js') },
  replay: { summary: 'run a scenario file exactly and check its expect (exit 0 met, 1 not, 2 bad file)', load: () => import('./replay.js') },
  serve: { summary: 'run the bug tracker over HTTP on loopback with a SQLite file (real mode)', load: () => import('./serve.js') },
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
    'Usage: retrysim <command> [options]     (retrysim <command> --help for its options)',
    '',
    'Commands:',
    ...names.map((n) => `  ${n.padEnd(width)}  ${commands[n]!.summary}`),
  ].join('\n');
}

/** Runs the CLI with these arguments; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return name === undefined ? 2 : 0;
  }
  const cmd = commands[name];
  if (cmd === undefined) {
    console.error(`retrysim: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  const mod = await cmd.load();
  return mod.run(rest);
}
