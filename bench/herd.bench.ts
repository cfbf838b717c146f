import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runGrid, DEFAULT_CLIENTS, DEFAULT_STRATEGIES } from '../src/herd/grid.js';
import { runHerd } from '../src/herd/model.js';
import { strategyCode } from '../src/backoff/strategies.js';
import { fusedHerd } from './herd-fused.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The herd on the full default grid (6 strategies × 3 client counts × 100
 * runs, ~4.3 M events): in-process on one thread, with workers, and the
 * whole `retrysim herd` command as a user runs it (process start included).
 * The yardstick: a plain Python port does ~0.6 M events/s here.
 */
export default async function herdBench(): Promise<void> {
  const grid = { strategies: DEFAULT_STRATEGIES, clients: DEFAULT_CLIENTS, runs: 100, seed: 1 };
  for (const workers of [0, 'auto'] as const) {
    const t0 = process.hrtime.bigint();
    const r = await runGrid({ ...grid, workers });
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    console.log(JSON.stringify({ bench: `herd.grid.${workers === 0 ? 'mainThread' : 'workers'}`, threads: r.workers + 1, events: r.events, seconds: +s.toFixed(3), eventsPerSec: Math.round(r.events / s), vsPython: +(r.events / s / 0.6e6).toFixed(1) }));
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
  console.log(JSON.stringify({ bench: 'herd.fusedCeiling', note: 'same model hand-fused into one JS function, one thread, warm', events: fusedEvents, seconds: +bestFused.toFixed(3), eventsPerSec: Math.round(fusedEvents / bestFused), vsPython: +(fusedEvents / bestFused / 0.6e6).toFixed(1) }));
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
      vsPython: +(events / best / 0.6e6).toFixed(1),
    }),
  );
}
