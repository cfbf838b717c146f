/**
 * One measurement of `npm run bench -- floor`, in a process of its own so
 * that checkouts (before / after) and measurements never share a JIT, a heap
 * or a cached database. Prints one JSON line on stdout.
 *
 *   node --import tsx bench/floor-child.ts cpu <checkout> <claim> <seed> <n> <warm>
 *     CPU µs per scenario of the claim's campaign in that checkout: run
 *     indices 0..n-1, generated and judged as `check --claim ID --seed S`
 *     does (its scanRuns), after `warm` scenarios of warm-up.
 *   node --import tsx bench/floor-child.ts floor <claim> <seed> <n> <reps>
 *     the floor of the same n scenarios, in this checkout (floor-record.ts).
 *   node --import tsx bench/floor-child.ts phases <claim> <seed> <n> <warm>
 *     where one scenario's CPU goes in this checkout: inside the main run's
 *     kernel, inside the recovery phase's kernel, and outside both
 *     (generation, database reset, checkers), by timing every Kernel.run.
 *   node --import tsx bench/floor-child.ts canaries <checkout> <seeds> <cap>
 *     for every failing claim of that checkout and seeds 1..seeds: the first
 *     failing run (1-based) of `check --claim ID --seed S`, scan only.
 *
 * A checkout is imported by path, so this file must only use what both the
 * before and the after checkouts export: `optionsOf` (src/campaign/job.ts),
 * `scanRuns` (src/campaign/run.ts) and `CLAIMS` (src/campaign/claims.ts).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface Checkout {
  optionsOf: (job: { claimId: string; runs: number; seed: number; explore: 'random' }, clockMs: () => number) => object;
  scanRuns: (o: object) => Promise<{ evaluated: number; firstFailure?: number; error?: string }>;
  CLAIMS: ReadonlyArray<{ id: string; expected: 'holds' | 'fails' }>;
}

async function load(root: string): Promise<Checkout> {
  const m = (p: string) => import(pathToFileURL(join(root, 'src', 'campaign', p)).href);
  const [job, run, claims] = await Promise.all([m('job.ts'), m('run.ts'), m('claims.ts')]);
  return { optionsOf: job.optionsOf, scanRuns: run.scanRuns, CLAIMS: claims.CLAIMS };
}

const clock = () => performance.now();
const cpuNow = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

const [mode, ...a] = process.argv.slice(2);
if (mode === 'cpu') {
  const [root, claimId, seed, n, warm] = a as [string, string, string, string, string];
  const c = await load(root);
  const scan = (runs: number) => c.scanRuns(c.optionsOf({ claimId, runs, seed: Number(seed), explore: 'random' }, clock));
  if (Number(warm) > 0) await scan(Number(warm));
  const t0 = cpuNow();
  const w0 = clock();
  const r = await scan(Number(n));
  const us = cpuNow() - t0;
  if (r.evaluated !== Number(n) || r.firstFailure !== undefined) throw new Error(`floor bench: ${claimId} in ${root} evaluated ${r.evaluated} of ${n} runs${r.firstFailure !== undefined ? `, failing at run ${r.firstFailure + 1}${r.error ? ` (${r.error})` : ''}` : ''}`);
  console.log(JSON.stringify({ cpuUsPerScenario: us / Number(n), wallUsPerScenario: ((clock() - w0) * 1000) / Number(n) }));
} else if (mode === 'floor') {
  const [claimId, seed, n, reps] = a as [string, string, string, string];
  const f = await import('./floor-record.js');
  const s = await f.recordStream(claimId, Number(seed), Number(n));
  const replay = f.prepareReplay(s);
  const { mismatches } = replay.run(true); // the fidelity pass (compares every result; not timed)
  replay.close();
  if (mismatches.length > 0) throw new Error(`floor bench: the replayed stream differs from the recorded one:\n${mismatches.join('\n')}`);
  // Warm-up of the other two parts (the replay above was the stream's): the JIT, not the work, would otherwise be timed.
  f.generate(claimId, Number(seed), Math.min(Number(n), 1000));
  await f.handOffs(s.taskSwitches);
  const best = { sql: Infinity, gen: Infinity, switches: Infinity, sqlNoBookkeeping: Infinity };
  const bookkeepingRe = /PRAGMA schema_version|total_changes\(\)/;
  for (let r = 0; r < Number(reps); r++) {
    const fresh = f.prepareReplay(s); // a fresh database each time, statements prepared before the clock starts
    best.sql = Math.min(best.sql, await f.cpuUs(() => fresh.run(false)));
    fresh.close();
    // The same stream without the host's bookkeeping reads (schema version, change counter): what they cost in SQLite itself.
    const lean = f.prepareReplay(s, (src) => !bookkeepingRe.test(src));
    best.sqlNoBookkeeping = Math.min(best.sqlNoBookkeeping, await f.cpuUs(() => lean.run(false)));
    lean.close();
    best.gen = Math.min(best.gen, await f.cpuUs(() => f.generate(claimId, Number(seed), Number(n))));
    best.switches = Math.min(best.switches, await f.cpuUs(() => f.handOffs(s.taskSwitches)));
  }
  const per = (x: number) => x / Number(n);
  const bySource = new Map<string, number>();
  for (const c of s.calls) {
    const k = c.stmt >= 0 ? s.statements[c.stmt]!.source : `exec ${c.sql}`;
    bySource.set(k, (bySource.get(k) ?? 0) + 1);
  }
  const bookkeeping = [...bySource].filter(([k]) => bookkeepingRe.test(k)).reduce((x, [, v]) => x + v, 0);
  console.log(JSON.stringify({
    sqlUs: per(best.sql), sqlWithoutBookkeepingUs: per(best.sqlNoBookkeeping), generationUs: per(best.gen), taskSwitchUs: per(best.switches),
    statementsPerScenario: s.calls.length / Number(n), bookkeepingShare: bookkeeping / s.calls.length,
    taskSwitchesPerScenario: s.taskSwitches / Number(n), recoveryPhasesPerScenario: (s.kernels - Number(n)) / Number(n),
    topStatements: [...bySource].sort((x, y) => y[1] - x[1]).slice(0, 6).map(([k, v]) => [k.replace(/\s+/g, ' ').slice(0, 70), +(v / Number(n)).toFixed(1)]),
  }));
} else if (mode === 'phases') {
  const [claimId, seed, n, warm] = a as [string, string, string, string];
  const c = await load(join(import.meta.dirname, '..'));
  const { Kernel } = await import('../src/sim/kernel.js');
  const scan = (runs: number) => c.scanRuns(c.optionsOf({ claimId, runs, seed: Number(seed), explore: 'random' }, clock));
  await scan(Number(warm));
  const inside = { main: 0, recovery: 0, recoveries: 0, mainWall: 0, recoveryWall: 0 };
  const kernelRun = Kernel.prototype.run;
  Kernel.prototype.run = async function (this: InstanceType<typeof Kernel>) {
    // The recovery phase's kernel names itself in its replay hint (src/scenario/recovery.ts).
    const k = this.replayHint.includes('recovery phase') ? 'recovery' : 'main';
    const t0 = cpuNow();
    const w0 = clock();
    try {
      return await kernelRun.call(this);
    } finally {
      inside[k] += cpuNow() - t0;
      inside[`${k}Wall`] += (clock() - w0) * 1000;
      if (k === 'recovery') inside.recoveries++;
    }
  };
  const t0 = cpuNow();
  const w0 = clock();
  await scan(Number(n));
  const all = cpuNow() - t0;
  const wall = (clock() - w0) * 1000;
  Kernel.prototype.run = kernelRun;
  const per = (x: number) => x / Number(n);
  console.log(JSON.stringify({ cpuUsPerScenario: per(all), mainRunUs: per(inside.main), recoveryPhaseUs: per(inside.recovery), outsideKernelsUs: per(all - inside.main - inside.recovery), recoveryPhasesPerScenario: inside.recoveries / Number(n), wall: { perScenarioUs: per(wall), mainRunUs: per(inside.mainWall), recoveryPhaseUs: per(inside.recoveryWall) } }));
} else if (mode === 'canaries') {
  const [root, seeds, cap] = a as [string, string, string];
  const c = await load(root);
  const out: Record<string, Array<number | null>> = {};
  for (const claim of c.CLAIMS.filter((x) => x.expected === 'fails')) {
    out[claim.id] = [];
    for (let seed = 1; seed <= Number(seeds); seed++) {
      const r = await c.scanRuns(c.optionsOf({ claimId: claim.id, runs: Number(cap), seed, explore: 'random' }, clock));
      out[claim.id]!.push(r.firstFailure === undefined ? null : r.firstFailure + 1);
    }
  }
  console.log(JSON.stringify(out));
} else {
  console.error(`floor-child: unknown mode '${mode}' (cpu, floor, phases or canaries)`);
  process.exit(2);
}
