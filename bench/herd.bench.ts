import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runGrid, DEFAULT_CLIENTS, DEFAULT_STRATEGIES } from '../src/herd/grid.js';
import { runHerd } from '../src/herd/model.js';
import { strategyCode } from '../src/backoff/strategies.js';
import { fusedHerd } from './herd-fused.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The Python reference simulator, from a clone: `../shared/bench/herd_ref.py` beside the repository. */
const HERD_REF = join(root, '..', 'shared', 'bench', 'herd_ref.py');

interface PythonRun {
  /** The whole `python3 herd_ref.py` process, start-up included. */
  seconds: number;
  /** Its simulation loop alone (its own perf_counter around the grid). */
  simSeconds: number;
  events: number;
}

/**
 * Runs herd_ref.py on the same grid (6 strategies × 10, 50, 100 clients ×
 * 100 runs), now, on this machine — the baseline every ratio below is
 * taken against. Returns why not when Python or the script is absent.
 */
function runPython(): PythonRun | { skipped: string } {
  if (!existsSync(HERD_REF)) return { skipped: `${HERD_REF} not found (it sits at ../shared/bench/herd_ref.py relative to the repository root)` };
  const v = spawnSync('python3', ['--version'], { encoding: 'utf8' });
  if (v.error || v.status !== 0) return { skipped: `python3 not runnable (${v.error?.message ?? v.stderr.trim()})` };
  const dir = mkdtempSync(join(tmpdir(), 'herd-ref-'));
  try {
    const out = join(dir, 'ref.json');
    const t0 = process.hrtime.bigint();
    const p = spawnSync('python3', [HERD_REF, '--runs', '100', '--clients', DEFAULT_CLIENTS.join(','), '--json', out], { encoding: 'utf8' });
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (p.status !== 0) return { skipped: `herd_ref.py failed: ${p.stderr.trim().split('\n').pop()}` };
    const j = JSON.parse(readFileSync(out, 'utf8')) as { total_events: number; wall_s: number };
    return { seconds, simSeconds: j.wall_s, events: j.total_events };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The herd on the full default grid (6 strategies × 3 client counts × 100
 * runs, ~4.3 M events): in-process on one thread, with workers, and the
 * whole `retrysim herd` command as a user runs it (process start included),
 * each beside herd_ref.py run on the same grid in the same bench run.
 * Simulation-loop figures are compared by events/s with Python's loop
 * (the two grids draw different streams, so their event counts differ by
 * a little); the command by wall time against the whole Python process.
 */
export default async function herdBench(): Promise<void> {
  const py = runPython();
  if ('skipped' in py) console.log(JSON.stringify({ bench: 'herd.python', skipped: `Python baseline skipped: ${py.skipped}; the vsPython ratios are left out` }));
  else console.log(JSON.stringify({ bench: 'herd.python', note: 'herd_ref.py, same grid (100 runs per cell), run now', events: py.events, seconds: +py.seconds.toFixed(3), simSeconds: +py.simSeconds.toFixed(3), eventsPerSec: Math.round(py.events / py.simSeconds) }));
  const pyRate = 'skipped' in py ? undefined : py.events / py.simSeconds;
  const vsPythonRate = (events: number, s: number) => (pyRate === undefined ? {} : { vsPython: +(events / s / pyRate).toFixed(1) });
  const grid = { strategies: DEFAULT_STRATEGIES, clients: DEFAULT_CLIENTS, runs: 100, seed: 1 };
  for (const workers of [0, 'auto'] as const) {
    const t0 = process.hrtime.bigint();
    const r = await runGrid({ ...grid, workers });
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(JSON.stringify({ bench: `herd.grid.${workers === 0 ? 'mainThread' : 'workers'}`, threads: r.workers + 1, events: r.events, seconds: +s.toFixed(3), eventsPerSec: Math.round(r.events / s), ...vsPythonRate(r.events, s) }));
  }
  // The ceiling: the same model hand-fused into one function (see
  // herd-fused.ts), checked against runHerd first so it is the same work.
  for (const strategy of DEFAULT_STRATEGIES) {
    for (const clients of DEFAULT_CLIENTS) {
      for (const seed of [1, 2]) {
        const a = await runHerd({ clients, strategy }, seed);
        const b = fusedHerd(clients, strategyCode(strategy), seed);
        if (a.calls !== b.calls || a.ms !== b.ms || a.events !== b.events) throw new Error(`fused herd differs from runHerd at ${strategy}/${clients}/seed ${seed}`);
      }
    }
  }
  let bestFused = Infinity;
  let fusedEvents = 0;
  for (let rep = 0; rep < 3; rep++) {
    fusedEvents = 0;
    const t0 = process.hrtime.bigint();
    for (const strategy of DEFAULT_STRATEGIES) for (const clients of DEFAULT_CLIENTS) for (let r = 0; r < 100; r++) fusedEvents += fusedHerd(clients, strategyCode(strategy), 1000 + r).events;
    bestFused = Math.min(bestFused, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  console.log(JSON.stringify({ bench: 'herd.fusedCeiling', note: 'same model hand-fused into one JS function, one thread, warm', events: fusedEvents, seconds: +bestFused.toFixed(3), eventsPerSec: Math.round(fusedEvents / bestFused), ...vsPythonRate(fusedEvents, bestFused) }));
  // The whole command, as a user runs it: process start (cached CLI bundle,
  // see bin/retrysim.js), workers, output. Other processes may share the
  // cores, so it runs several times and reports the best and the median.
  spawnSync(process.execPath, [join(root, 'bin', 'retrysim.js'), '--help'], { encoding: 'utf8' }); // builds the bundle if the sources changed
  const seconds: number[] = [];
  let events = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    const p = spawnSync(process.execPath, [join(root, 'bin', 'retrysim.js'), 'herd', '--json'], { encoding: 'utf8' });
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
    if (p.status !== 0) throw new Error(`retrysim herd failed: ${p.stderr}`);
    events = (JSON.parse(p.stdout) as Array<{ events: number }>).reduce((a, c) => a + c.events, 0);
  }
  seconds.sort((a, b) => a - b);
  const best = seconds[0]!;
  const median = seconds[Math.floor(seconds.length / 2)]!;
  console.log(
    JSON.stringify({
      bench: 'herd.command',
      events,
      runs: seconds.length,
      bestSeconds: +best.toFixed(3),
      medianSeconds: +median.toFixed(3),
      bestEventsPerSec: Math.round(events / best),
      medianEventsPerSec: Math.round(events / median),
      ...('skipped' in py ? {} : { pythonSeconds: +py.seconds.toFixed(3), vsPythonWall: +(py.seconds / best).toFixed(1), vsPythonRate: +(events / best / (py.events / py.seconds)).toFixed(1) }),
    }),
  );
}
