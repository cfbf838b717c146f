/**
 * `retrysim herd`: the OCC thundering-herd experiment (SPEC §2) over a grid of
 * strategies × client counts. Wall-clock measurement lives here, in the CLI,
 * outside the model.
 */
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { STRATEGY_NAMES, isStrategyName } from '../backoff/strategies.js';
import type { StrategyName } from '../backoff/strategies.js';
import { runGrid, herdJsonRow, DEFAULT_CLIENTS, DEFAULT_RUNS, DEFAULT_STRATEGIES } from '../herd/grid.js';
import { herdSvg } from '../herd/svg.js';
import { FLAG_TABLES, UsageError, asksHelp, joinNegativeValues, seedFlag, writableFile } from './args.js';

const HELP = `Usage: retrysim herd [options]

The AWS Architecture Blog thundering-herd model: N clients each write one
shared row once under optimistic concurrency (read version, write, back off
on conflict). One-way latency |N(10 ms, 2 ms)|, base 5 ms, cap 2000 ms.

Options:
  --clients LIST      client counts, comma-separated (default ${DEFAULT_CLIENTS.join(',')})
  --strategies LIST   of ${STRATEGY_NAMES.join(',')} (default: all)
  --runs N            runs per cell (default ${DEFAULT_RUNS})
  --seed N            the one seed (default 1); per-cell seeds are forked from it
  --workers N|auto    worker threads besides the main thread (default auto)
  --json              print one JSON array of cells instead of the table
  --svg FILE          write write-arrival-time histograms per strategy to FILE
  --html FILE         write the herd explorer page instead of running the grid: the
                      engine runs in the page, the form starts at the first
                      strategy and client count given here, --runs and --seed
  -h, --help          this text

Exit: 0, 2 bad flags (a value out of range: at most 5,000 clients and ~10^9
simulated events).`;

interface Opts {
  clients: number[];
  strategies: StrategyName[];
  runs: number;
  seed: number;
  workers: number | 'auto';
  json: boolean;
  svg: string | undefined;
  html: string | undefined;
}

/** The flags of `retrysim herd` (exported for the command-line fuzz test). */
export const HERD_OPTIONS = {
  clients: { type: 'string' },
  strategies: { type: 'string' },
  runs: { type: 'string' },
  seed: { type: 'string' },
  workers: { type: 'string' },
  json: { type: 'boolean' },
  svg: { type: 'string' },
  html: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** More clients than this and one `none` run alone nears the model's 50 M event limit (~0.7 × clients² events). */
export const CLIENTS_MAX = 5000;
/** Estimated kernel events of a whole command, at most: about two minutes at ~10 M events/s. */
export const EVENTS_MAX = 1e9;

/** An upper estimate of the grid's kernel events: runs × Σ (clients² + 4 × clients) per strategy (measured ≤ 0.7 c² + 4c). */
export function estimatedEvents(runs: number, clients: readonly number[], strategies: number): number {
  return runs * strategies * clients.reduce((s, c) => s + c * c + 4 * c, 0);
}

function parse(argv: string[]): Opts | 'help' {
  FLAG_TABLES.set('herd', HERD_OPTIONS);
  // `--seed --help` (a value missing) asks for help too, as in every command (args.ts flags()).
  if (asksHelp(argv)) return 'help';
  let values;
  try {
    ({ values } = parseArgs({
      args: joinNegativeValues(argv, HERD_OPTIONS),
      strict: true,
      allowPositionals: false,
      options: HERD_OPTIONS,
    }));
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (values.help) return 'help';
  const int = (name: string, s: string, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const n = Number(s);
    if (s.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new UsageError(`--${name} must be an integer ${max < Number.MAX_SAFE_INTEGER ? `from ${min} to ${max}` : `>= ${min}`}, got '${s}'`);
    }
    return n;
  };
  const clients = values.clients === undefined ? [...DEFAULT_CLIENTS] : values.clients.split(',').map((s) => int('clients', s, 1, CLIENTS_MAX));
  const strategies = values.strategies === undefined ? [...DEFAULT_STRATEGIES] : values.strategies.split(',').map((s) => s.trim());
  for (const s of strategies) if (!isStrategyName(s)) throw new UsageError(`--strategies: unknown strategy '${s}' (known: ${STRATEGY_NAMES.join(', ')})`);
  if (new Set(clients).size !== clients.length) throw new UsageError('--clients lists a count twice');
  if (new Set(strategies).size !== strategies.length) throw new UsageError('--strategies lists a strategy twice');
  const runs = values.runs === undefined ? DEFAULT_RUNS : int('runs', values.runs, 1);
  const events = estimatedEvents(runs, clients, strategies.length);
  if (events > EVENTS_MAX) {
    throw new UsageError(`--runs ${runs} × --clients ${clients.join(',')} × ${strategies.length} strategies is about ${events.toExponential(1)} ` +
      `simulated events (limit ${EVENTS_MAX.toExponential(0)}, a couple of minutes); lower --runs or --clients`);
  }
  const seed = seedFlag(values.seed);
  const workers = values.workers === undefined || values.workers === 'auto' ? 'auto' : int('workers', values.workers, 0, 64);
  if (values.svg === '') throw new UsageError('--svg needs a file name');
  if (values.svg !== undefined) writableFile('svg', values.svg);
  if (values.html !== undefined) writableFile('html', values.html);
  return { clients, strategies: strategies as StrategyName[], runs, seed, workers, json: values.json ?? false, svg: values.svg, html: values.html };
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  let opts: Opts | 'help';
  try {
    opts = parse(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // One line, as every command's flag errors are (cli/args.ts flags()).
    console.error(`retrysim herd: ${e.message.replace(/\s*\n\s*/g, ' ')} (retrysim herd --help lists the options)`);
    return 2;
  }
  if (opts === 'help') {
    console.log(HELP);
    return 0;
  }
  const o = opts;
  if (o.html !== undefined) {
    const { herdPage } = await import('../report/html/herd-page.js');
    writeFileSync(o.html, await herdPage({ strategy: o.strategies[0]!, clients: o.clients[0]!, runs: o.runs, seed: o.seed }));
    console.log(`wrote ${o.html} — the herd engine runs in the page; open it in a browser`);
    return 0;
  }
  const replay = `retrysim herd --seed ${o.seed} --clients ${o.clients.join(',')} --strategies ${o.strategies.join(',')} --runs ${o.runs}`;
  if (!o.json) console.log(`seed ${o.seed}   (reproduce: ${replay})`);
  const totalRuns = o.clients.length * o.strategies.length * o.runs;
  // cli-progress and cli-table3 are loaded only when used (~20 ms of
  // start-up that `--json` and non-TTY runs need not pay).
  const cliProgress = process.stderr.isTTY && totalRuns * Math.max(...o.clients) >= 50_000 ? (await import('cli-progress')).default : undefined;
  const bar = cliProgress
    ? new cliProgress.SingleBar({ stream: process.stderr, format: 'herd [{bar}] {value}/{total} runs', clearOnComplete: true, hideCursor: true }, cliProgress.Presets.shades_classic)
    : undefined;
  bar?.start(totalRuns, 0);
  const t0 = process.hrtime.bigint(); // real-time: allowed (CLI wall-clock report, outside the model)
  const result = await runGrid({
    strategies: o.strategies,
    clients: o.clients,
    runs: o.runs,
    seed: o.seed,
    workers: o.workers,
    histograms: o.svg !== undefined,
    onProgress: (done) => bar?.update(done),
  });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9; // real-time: allowed (CLI wall-clock report)
  bar?.stop();
  if (o.svg !== undefined) writeFileSync(o.svg, herdSvg(result.cells));
  if (o.json) {
    console.log(JSON.stringify(result.cells.map(herdJsonRow)));
    return 0;
  }
  const Table = (await import('cli-table3')).default;
  const table = new Table({ head: ['strategy', ...o.clients.flatMap((n) => [`calls @${n}`, `ms @${n}`])], style: { head: [], border: [] } });
  for (const s of o.strategies) {
    const row: string[] = [s];
    for (const n of o.clients) {
      const c = result.cells.find((x) => x.strategy === s && x.clients === n)!;
      row.push(`${c.calls.toFixed(1)} ± ${c.callsSe.toFixed(1)}`, `${c.ms.toFixed(0)} ± ${c.msSe.toFixed(0)}`);
    }
    table.push(row);
  }
  console.log(table.toString());
  console.log(`mean ± standard error over ${o.runs} run(s) per cell; calls = write requests (successes and failures); ms = virtual time when the last client's write succeeded.`);
  console.log('note: the server is never overloaded in this model, so `none` (no backoff) finishes fast — but makes by far the most calls.');
  console.log(
    `events ${result.events}   wall ${wallS.toFixed(3)} s   ${(result.events / wallS / 1e6).toFixed(2)} M events/s   threads ${result.workers + 1} (main + ${result.workers} worker${result.workers === 1 ? '' : 's'})`,
  );
  if (o.svg !== undefined) console.log(`wrote ${o.svg}`);
  return 0;
}
