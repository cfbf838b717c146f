/**
 * `npm run bench -- start`: what one CLI command costs from a cold process
 * (node's start, the cached bundle of bin/retrysim.js, its packages, the
 * command's work), in CPU (the process and its children: worker threads,
 * the fresh-process replay `check --service` runs) and wall time. The test
 * suite starts the CLI about a thousand times, and a user every time.
 *
 * With RETRYSIM_BENCH_BEFORE=<another checkout with a node_modules of its
 * own> the same commands run there too, alternating command by command, and
 * each figure is printed before / after with the ratio of the bests. (A
 * node_modules shared by symlink would share the bundle cache too, and each
 * checkout would rebuild the other's bundle at every start: copy it,
 * `cp -al node_modules <before>/ && rm -rf <before>/node_modules/.cache`.)
 * CPU is read from /proc (the children's times once they have been waited
 * for), so it is Linux only; elsewhere only wall time is printed.
 * RETRYSIM_START_REPS: rounds (default 5), each command once per round and
 * checkout after one warm-up start (which builds a stale bundle).
 *
 * Then, in this checkout, the commands on a user's TypeScript module under
 * "type": "module" run alternately with RETRYSIM_TS_CACHE=0 (the module
 * loaded through tsx's loader thread, as before the cache) and without (the
 * module compiled once into node_modules/.cache/retrysim/ts and imported
 * natively: src/service/ts-cache.ts), `bench: 'start.tsModule'`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** The commands timed, run from the checkout's root; exit codes as expected. */
const COMMANDS: Array<{ what: string; args: (found: string) => string[]; exit: number; tsModule?: true }> = [
  { what: '--version', args: () => ['--version'], exit: 0 },
  { what: 'replay <canonical file>', args: () => ['replay', 'scenarios/canonical/lost_response/key_atomic--tool_call.json'], exit: 0 },
  { what: 'check --claim naive-none-fails --runs 20 (two threads)', args: (f) => ['check', '--claim', 'naive-none-fails', '--runs', '20', '--found', f], exit: 0 }, // a canary failing as expected: exit 0
  { what: 'check --service examples/payments-atomic/service.ts --runs 20', args: (f) => ['check', '--service', 'examples/payments-atomic/service.ts', '--runs', '20', '--found', f], exit: 0, tsModule: true },
  // Fails at once, shrinks, and replays the counterexample in a fresh process (a second load of the module).
  { what: 'check --service examples/two-transactions/service.ts --runs 20', args: (f) => ['check', '--service', 'examples/two-transactions/service.ts', '--runs', '20', '--found', f], exit: 1, tsModule: true },
];

/** CPU seconds this process's waited-for children have used (Linux /proc), or undefined. */
function childrenCpu(): number | undefined {
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[13]) + Number(f[14])) / 100; // cutime + cstime, in clock ticks (100 per second on Linux)
  } catch {
    return undefined;
  }
}

function once(dir: string, args: string[], exit: number, env: NodeJS.ProcessEnv = process.env): { wallMs: number; cpuMs: number | undefined } {
  const c0 = childrenCpu();
  const t0 = performance.now();
  const p = spawnSync(process.execPath, [join(dir, 'bin', 'retrysim.js'), ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 24, env });
  const wallMs = performance.now() - t0;
  const c1 = childrenCpu();
  if (p.status !== exit) throw new Error(`bench start: \`retrysim ${args.join(' ')}\` in ${dir} exited ${p.status}, expected ${exit}:\n${p.stderr}`);
  return { wallMs, cpuMs: c0 === undefined || c1 === undefined ? undefined : (c1 - c0) * 1000 };
}

export default async function startBench(): Promise<void> {
  const before = process.env.RETRYSIM_BENCH_BEFORE || undefined;
  if (before !== undefined && !existsSync(join(before, 'bin', 'retrysim.js'))) {
    console.error(`bench start: RETRYSIM_BENCH_BEFORE=${before} has no bin/retrysim.js (a checkout of retrysim with its own node_modules)`);
    process.exit(2);
  }
  const reps = Number(process.env.RETRYSIM_START_REPS ?? 5);
  if (!Number.isInteger(reps) || reps < 1) {
    console.error(`bench start: RETRYSIM_START_REPS must be a whole number of rounds ≥ 1, got '${process.env.RETRYSIM_START_REPS}'`);
    process.exit(2);
  }
  const checkouts = before === undefined ? [['after', root]] as const : [['before', before], ['after', root]] as const;
  const found = mkdtempSync(join(tmpdir(), 'rs-start-'));
  try {
    for (const c of COMMANDS) {
      const got: Record<string, { wallMs: number[]; cpuMs: number[] }> = {};
      for (const [k, dir] of checkouts) {
        once(dir, c.args(found), c.exit); // warm-up: builds the checkout's bundles when they are stale
        got[k] = { wallMs: [], cpuMs: [] };
      }
      for (let r = 0; r < reps; r++) {
        for (const [k, dir] of checkouts) {
          const x = once(dir, c.args(found), c.exit);
          got[k]!.wallMs.push(Math.round(x.wallMs));
          if (x.cpuMs !== undefined) got[k]!.cpuMs.push(Math.round(x.cpuMs));
        }
      }
      const best = (xs: number[]) => (xs.length === 0 ? null : Math.min(...xs));
      const line = (k: string) => ({ bestWallMs: best(got[k]!.wallMs), bestCpuMs: best(got[k]!.cpuMs), wallMs: got[k]!.wallMs, cpuMs: got[k]!.cpuMs });
      const ratio = (f: 'wallMs' | 'cpuMs') => {
        const a = best(got.after![f]);
        const b = before === undefined ? null : best(got.before![f]);
        return a === null || b === null ? null : +(a / b).toFixed(2);
      };
      console.log(JSON.stringify({
        bench: 'start', command: `retrysim ${c.what}`,
        after: line('after'),
        ...(before === undefined
          ? { before: 'set RETRYSIM_BENCH_BEFORE=<another checkout with a node_modules of its own> to measure it beside this one' }
          : { before: { checkout: before, ...line('before') }, afterOverBefore: { cpu: ratio('cpuMs'), wall: ratio('wallMs') } }),
      }));
    }
    tsModuleLoads(found, reps);
  } finally {
    rmSync(found, { recursive: true, force: true });
  }
}

/** The `.ts` module commands through tsx's loader (RETRYSIM_TS_CACHE=0) and through the cache, alternating. */
function tsModuleLoads(found: string, reps: number): void {
  const ways = [['tsx', { ...process.env, RETRYSIM_TS_CACHE: '0' }], ['cache', { ...process.env, RETRYSIM_TS_CACHE: '1' }]] as const;
  for (const c of COMMANDS.filter((x) => x.tsModule === true)) {
    const got: Record<string, { wallMs: number[]; cpuMs: number[] }> = { tsx: { wallMs: [], cpuMs: [] }, cache: { wallMs: [], cpuMs: [] } };
    for (const [, env] of ways) once(root, c.args(found), c.exit, env); // warm-up: the bundle, tsx's and our compile caches
    for (let r = 0; r < reps; r++) {
      for (const [k, env] of ways) {
        const x = once(root, c.args(found), c.exit, env);
        got[k]!.wallMs.push(Math.round(x.wallMs));
        if (x.cpuMs !== undefined) got[k]!.cpuMs.push(Math.round(x.cpuMs));
      }
    }
    const best = (xs: number[]) => (xs.length === 0 ? null : Math.min(...xs));
    const ratio = (f: 'wallMs' | 'cpuMs') => {
      const a = best(got.cache![f]);
      const b = best(got.tsx![f]);
      return a === null || b === null ? null : +(a / b).toFixed(2);
    };
    const line = (k: string) => ({ bestWallMs: best(got[k]!.wallMs), bestCpuMs: best(got[k]!.cpuMs), wallMs: got[k]!.wallMs, cpuMs: got[k]!.cpuMs });
    console.log(JSON.stringify({ bench: 'start.tsModule', command: `retrysim ${c.what}`, tsxLoader: line('tsx'), compiledCache: line('cache'), cacheOverTsx: { cpu: ratio('cpuMs'), wall: ratio('wallMs') } }));
  }
}
