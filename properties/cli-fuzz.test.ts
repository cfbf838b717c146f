/**
 * Command lines generated from each command's flag table (FLAG_TABLES) with
 * hostile values: every one ends in exit 2 with one line naming a flag or
 * value it was given, or reaches the command's work with inputs inside the
 * bounds that work can run — never a stack trace, never an escaped error.
 *
 * The work itself (herd grid, amplification runs, campaigns, real servers)
 * is replaced by stand-ins that check their inputs and return at once, so a
 * case costs milliseconds; the stand-ins fail the case (an "internal error"
 * line) when a command hands them something it should have refused.
 */
import { afterAll, afterEach, describe, expect, vi } from 'vitest';
import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { join } from 'node:path';
import { appendFileSync } from 'node:fs';
import { tempDirs } from '../src/testing/temp-dirs.js';
import { FLAG_TABLES } from '../src/cli/args.js';

const check = (ok: boolean, what: string) => {
  if (!ok) throw new Error(`command handed its work an input it should have refused: ${what}`);
};

vi.mock('../src/herd/grid.js', async (orig) => {
  const m = await orig<typeof import('../src/herd/grid.js')>();
  return {
    ...m,
    runGrid: async (o: Parameters<typeof m.runGrid>[0]) => {
      // Imported here, not in the factory: the command imports this module.
      const { estimatedEvents, EVENTS_MAX, CLIENTS_MAX } = await import('../src/cli/herd.js');
      check(o.clients.length > 0 && o.clients.every((c) => Number.isSafeInteger(c) && c >= 1 && c <= CLIENTS_MAX), `clients ${o.clients}`);
      check(o.strategies.length > 0 && Number.isSafeInteger(o.runs) && o.runs >= 1 && Number.isSafeInteger(o.seed), `runs ${o.runs} seed ${o.seed}`);
      check(estimatedEvents(o.runs, o.clients, o.strategies.length) <= EVENTS_MAX, 'grid too large');
      const cells = o.strategies.flatMap((strategy) => o.clients.map((clients) => ({ strategy, clients, runs: o.runs, calls: 1, callsSe: 0, ms: 1, msSe: 0, events: 1, hist: new Uint32Array(0) })));
      return { cells, events: cells.length, workers: 0 };
    },
  };
});

vi.mock('../src/retry/amplification.js', async (orig) => {
  const m = await orig<typeof import('../src/retry/amplification.js')>();
  return {
    ...m,
    amplificationTable: async (o: Parameters<typeof m.amplificationTable>[0]) => {
      const { worstCaseLayerRequests, LAYER_REQUESTS_MAX } = await import('../src/cli/amplify.js');
      check(o.attempts.length >= 1 && o.attempts.every((a) => Number.isSafeInteger(a) && a >= 1), `attempts ${o.attempts}`);
      check(o.failureRate! >= 0 && o.failureRate! <= 1 && Number.isSafeInteger(o.seed), `rate ${o.failureRate}`);
      check(worstCaseLayerRequests(o.attempts, o.calls) <= LAYER_REQUESTS_MAX, 'amplification too large');
      return o.controls.map((control) => ({ control, name: control, cells: o.attempts.map((_, i) => ({ layers: i + 1, requestsPerCall: 1, closedForm: 1, backendRequests: 1, layerRequests: [1], layerRetries: [0], succeeded: o.calls, timeMs: 1 })) }));
    },
    simulateAmplification: async () => ({ requestsPerCall: 1, closedForm: 1 }),
  };
});

vi.mock('../src/real/flaky.js', async (orig) => {
  const m = await orig<typeof import('../src/real/flaky.js')>();
  return {
    ...m,
    runFlakyLab: async (o: Parameters<typeof m.runFlakyLab>[0] = {}) => {
      check(o.runs! >= 1 && o.runs! <= 10_000 && o.slowMs! >= 0 && o.slowMs! <= 1000 && o.staggerMaxMs! <= 1000 && o.schedulesMax! <= 100_000, JSON.stringify(o));
      throw Object.assign(new Error('stand-in'), { standIn: true });
    },
  };
});

vi.mock('../src/real/conformance.js', async (orig) => {
  const m = await orig<typeof import('../src/real/conformance.js')>();
  return {
    ...m,
    runConformance: async (o: Parameters<typeof m.runConformance>[0] = {}) => {
      check(o.rows === undefined || o.rows.length > 0, 'an empty --rows reached the work');
      check(o.columns === undefined || o.columns.length > 0, 'an empty --columns reached the work');
      return [];
    },
  };
});

vi.mock('../src/campaign/job.js', async (orig) => {
  const m = await orig<typeof import('../src/campaign/job.js')>();
  return {
    ...m,
    runJob: async (job: Parameters<typeof m.runJob>[0]) => {
      const { CLAIMS } = await import('../src/campaign/claims.js');
      check(Number.isSafeInteger(job.runs) && job.runs >= 1 && Number.isSafeInteger(job.seed), JSON.stringify(job));
      const claim = CLAIMS.find((c) => c.id === job.claimId)!;
      return { claim, seed: job.seed, runs: job.runs, verdict: claim.expected, shrinks: 0 };
    },
  };
});

// Generated campaigns run through the thread pool: the stand-in checks the
// job and answers at once (a campaign of 10^8 runs is a valid request).
vi.mock('../src/campaign/pool.js', async (orig) => {
  const m = await orig<typeof import('../src/campaign/pool.js')>();
  class StandInPool {
    constructor(_entry: unknown, readonly size: number) {}
    async run(job: Parameters<InstanceType<typeof m.CampaignPool>['run']>[0]) {
      const { CLAIMS } = await import('../src/campaign/claims.js');
      check(Number.isSafeInteger(job.runs) && job.runs >= 1 && Number.isSafeInteger(job.seed), JSON.stringify(job));
      check(job.timeBudgetMs === undefined || (job.timeBudgetMs > 0 && job.timeBudgetMs <= 7 * 86_400_000), `time budget ${job.timeBudgetMs}`);
      const claim = CLAIMS.find((c) => c.id === job.claimId)!;
      return { claim, seed: job.seed, runs: job.runs, verdict: claim.expected, shrinks: 0 };
    }
    async close() {}
  }
  return { ...m, CampaignPool: StandInPool };
});

vi.mock('../src/real/server.js', async (orig) => {
  const m = await orig<typeof import('../src/real/server.js')>();
  return {
    ...m,
    // Validation passed: say so and stop, instead of serving forever.
    startServer: async () => {
      throw new m.ServeError('stand-in: flags accepted');
    },
  };
});

const { main } = await import('../src/cli/main.js');
const tmp = tempDirs();
const dir = tmp('rs-cli-fuzz-');
const SCENARIO = join(import.meta.dirname, '..', 'scenarios/canonical/lost_response/naive--none.json');
// Generated values are paths too (`--out HGWE` is a valid request that
// writes a file): relative ones land in this temporary directory, never in
// the checkout.
const home = process.cwd();
process.chdir(dir);
afterAll(() => process.chdir(home));

/** Runs main in-process, capturing what it prints. */
async function runCli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const log = vi.spyOn(console, 'log').mockImplementation((...a) => void (out += a.join(' ') + '\n'));
  const error = vi.spyOn(console, 'error').mockImplementation((...a) => void (err += a.join(' ') + '\n'));
  const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return { code: await main(argv), out, err };
  } finally {
    log.mockRestore();
    error.mockRestore();
    write.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

/** Values that have broken commands before: signs, exponents, huge, empty, lists, paths. */
const hostile = fc.oneof(
  fc.constantFrom('-1', '0', '1', '2', '0.5', '1e8', '1e10', '1e300', '-0', 'NaN', 'Infinity', '', ' ', 'x', ',', '1,2', '1,,2', '10,10', '99999999999999999',
    '9007199254740993', '-5', 'auto', 'none', 'key_atomic', 'naive/none', 'lost_response', 'tracker–1', 'a\r\nb', '/proc/x', join(dir, 'out'), SCENARIO),
  fc.string({ maxLength: 8 }),
  fc.integer({ min: -3, max: 30 }).map(String),
);

const COMMANDS = ['amplify', 'herd', 'flaky', 'conformance', 'check', 'serve', 'matrix', 'replay', 'migrate', 'demo'] as const;
/** Flags that would make the stand-in-free parts heavy or touch the repository: pinned for the fuzz. */
const PINNED: Partial<Record<(typeof COMMANDS)[number], string[]>> = {
  check: ['--workers', '1', '--found', join(dir, 'found')],
  matrix: [],
  serve: [],
};
const SKIP_FLAGS: Partial<Record<(typeof COMMANDS)[number], string[]>> = {
  check: ['workers', 'found'],
  matrix: ['write-scenarios'],
  serve: ['standby', 'listen-not-before'],
  migrate: ['check'],
};

describe('command lines from each flag table', async () => {
  // Load every command's table (FLAG_TABLES fills as commands parse flags).
  for (const c of COMMANDS) await runCli([c, '--help']);
  const commandArb = fc.constantFrom(...COMMANDS).chain((command) => {
    const table = FLAG_TABLES.get(command)!;
    const names = Object.keys(table).filter((n) => n !== 'help' && !(SKIP_FLAGS[command] ?? []).includes(n));
    const misc = fc.constantFrom<string[]>(['--bogus'], ['-x'], ['stray'], [SCENARIO], ['--seed']);
    if (names.length === 0) return fc.array(misc, { maxLength: 3 }).map((fs) => ({ command, argv: [command, ...fs.flat()] }));
    const flagArb: fc.Arbitrary<string[]> = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...names).chain((n) => (table[n]!.type === 'boolean' ? fc.constant<string[]>([`--${n}`]) : fc.tuple(fc.constant(`--${n}`), hostile).map(([f, v]) => (v.startsWith('-') && !/^-\d/.test(v) ? [`${f}=${v}`] : [f, v])))) },
      { weight: 1, arbitrary: misc },
    );
    return fc.array(flagArb, { maxLength: 4 }).map((fs) => ({ command, argv: [command, ...(PINNED[command] ?? []), ...fs.flat()] }));
  });

  test.prop([commandArb], { numRuns: Number(process.env.CLI_FUZZ_RUNS ?? 300), seed: Number(process.env.FUZZ_SEED ?? 15) })('ends in exit 2 naming its input, or a bounded run — never a stack trace', async ({ command, argv }) => {
    if (process.env.CLI_FUZZ_LOG) appendFileSync(process.env.CLI_FUZZ_LOG, argv.join(' ') + '\n');
    const r = await runCli(argv);
    const said = r.err + r.out;
    // (The flaky stand-in ends the run by throwing 'stand-in' once its inputs passed.)
    expect(said).not.toMatch(/internal error(?!: stand-in)|^\s+at .*:\d+:\d+/m);
    expect([0, 1, 2]).toContain(r.code);
    if (r.code === 2) {
      const first = r.err.split('\n')[0]!;
      expect(first).toMatch(/^retrysim( \w+)?: /);
      // The message names something that was on the command line.
      const words = argv.slice(1).flatMap((a) => [a, a.replace(/^--?/, '').split('=')[0]!]).filter((w) => w.trim() !== '');
      // ...or a required flag that was missing (a flag of the command's own table).
      const required = Object.keys(FLAG_TABLES.get(command)!).map((n) => `--${n}`);
      const named = words.some((w) => first.includes(w)) || required.some((f) => first.includes(f)) || /expected (exactly one|at least one)|names nothing/.test(first);
      expect(named, `${argv.join(' ')} → ${first}`).toBe(true);
    }
  }, 120_000);
});
