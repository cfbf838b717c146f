import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const childFile = join(import.meta.dirname, 'instructions-child.ts');
const CLAIM = 'key_atomic-tool_call-holds';
const SEED = 1;

function envInt(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`instructions bench: ${name}=${v} is not a positive integer`);
  return n;
}

/**
 * One child under callgrind, instrumentation off except inside the windows
 * it opens (bench/instructions-child.ts); each window's count is dumped on
 * its own. Resolves to instructions per window name.
 */
function counted(args: string[]): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'rs-cg-'));
  const out = join(dir, 'cg.out');
  const p = spawn('valgrind', ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`, '--smc-check=all-non-file', process.execPath, '--single-threaded', '--import', 'tsx', childFile, ...args], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  const order: string[] = [];
  let err = '';
  let buf = '';
  p.stderr.on('data', (c) => (err += c));
  p.stdout.on('data', (c) => {
    buf += c;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const m = /^(ON|OFF) (\S+)$/.exec(line);
      if (m === null) continue;
      if (m[1] === 'ON') execFileSync('callgrind_control', ['-i', 'on', String(p.pid)], { stdio: 'ignore' });
      else {
        execFileSync('callgrind_control', ['-i', 'off', String(p.pid)], { stdio: 'ignore' });
        execFileSync('callgrind_control', ['-d', String(p.pid)], { stdio: 'ignore' });
        order.push(m[2]!);
      }
      p.stdin.write('\n');
    }
  });
  return new Promise((resolve, reject) => {
    p.on('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`instructions bench: ${args.join(' ')} exited ${code}:\n${err.split('\n').filter((l) => !l.startsWith('==')).join('\n')}`);
        // Dumps are cg.out.1, cg.out.2, … in the order they were asked for (the last, at exit, counts nothing).
        const dumps = readdirSync(dir).filter((f) => /^cg\.out\.\d+$/.test(f)).sort((x, y) => Number(x.split('.').pop()) - Number(y.split('.').pop()));
        const counts: Record<string, number> = {};
        order.forEach((name, i) => {
          const text = readFileSync(join(dir, dumps[i]!), 'utf8');
          const t = /^totals: (\d+)/m.exec(text); // (`summary:` is the part-dump header, 0 here)
          if (t === null) throw new Error(`instructions bench: no total in callgrind's dump ${dumps[i]}`);
          counts[name] = Number(t[1]);
        });
        resolve(counts);
      } catch (e) {
        reject(e);
      } finally {
        if (!process.env.KEEP_CG) rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

const r2 = (x: number) => Math.round(x * 100) / 100;

/**
 * The floor ratio in instructions (issue #21), a figure this VM's load and
 * drifting speed move far less than time: valgrind counts the instructions
 * each piece executes (so both checkouts are measured at the same time).
 * Not entirely: V8 schedules garbage collections partly by measured speed,
 * so one may land in a window in one run and not in the next. For the holding claim key_atomic-tool_call-holds, seed 1:
 * instructions per scenario of N campaign scenarios (after N of warm-up, in
 * V8's single-threaded mode so that no background compiler or GC thread is
 * counted in one round and not another), and of the same N scenarios'
 * floor (the floor bench's three parts: the recorded SQLite stream replayed,
 * generation, bare task switches); the ratio of the two, and with
 * RETRYSIM_BENCH_BEFORE=<another checkout> the same for it and after ÷
 * before. Instructions are not time — JavaScript stalls on memory more than
 * SQLite does, so the time ratio (`npm run bench -- floor`) is the goal's
 * figure — but a change that removes a tenth of the work shows here.
 * Needs valgrind (`apt-get install valgrind`); skipped without it. Sizes:
 * RETRYSIM_INSTR_RUNS (N, default 300), RETRYSIM_INSTR_REPS (rounds, default 2).
 */
export default async function instructionsBench(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).status !== 0) {
    console.log(JSON.stringify({ bench: 'instructions', skipped: 'valgrind is not installed (apt-get install valgrind)' }));
    return;
  }
  const n = envInt('RETRYSIM_INSTR_RUNS', 300);
  const reps = envInt('RETRYSIM_INSTR_REPS', 2);
  const before = process.env.RETRYSIM_BENCH_BEFORE || undefined;
  const t0 = performance.now();
  const floor = await counted(['floor', CLAIM, String(SEED), String(n)]);
  const per = (x: number) => Math.round(x / n);
  const floorPer = per(floor.sql! + floor.generation! + floor.switches!);
  console.log(JSON.stringify({
    bench: 'instructions.floor', claim: CLAIM, seed: SEED, scenarios: n,
    floorPerScenario: floorPer, sqlReplayPerScenario: per(floor.sql!), generationPerScenario: per(floor.generation!), taskSwitchesPerScenario: per(floor.switches!),
  }));
  const sides = before ? ([['before', before], ['after', root]] as const) : ([['after', root]] as const);
  const got: Record<string, number[]> = { before: [], after: [] };
  for (let rep = 0; rep < reps; rep++) {
    // Both checkouts at once: a count depends far less than time on what runs beside it.
    const counts = await Promise.all(sides.map(([, dir]) => counted(['campaign', dir, CLAIM, String(SEED), String(n), String(n)])));
    sides.forEach(([k], i) => got[k]!.push(per(counts[i]!.campaign!)));
  }
  const line = (k: 'before' | 'after') => {
    const xs = got[k]!;
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    return { perScenario: Math.round(mean), eachRound: xs, ratioToFloor: r2(mean / floorPer) };
  };
  const mean = (k: 'before' | 'after') => got[k]!.reduce((s, x) => s + x, 0) / got[k]!.length;
  console.log(JSON.stringify({
    bench: 'instructions.ratio', claim: CLAIM, scenarios: n, floorPerScenario: floorPer,
    after: line('after'),
    ...(before ? { before: { checkout: before, ...line('before') }, afterOverBefore: r2(mean('after') / mean('before')) } : { before: 'set RETRYSIM_BENCH_BEFORE=<another checkout with node_modules> to count it beside this one' }),
    seconds: Math.round((performance.now() - t0) / 1000),
  }));
}
