import { flags, intFlag, seedFlag, usage, UsageError } from './args.js';
import { textTable } from '../report/table.js';
import { BUILTIN_SERVICES as VARIANTS, type BuiltinName as Variant } from '../tracker/builtin.js';
import { runFlakyLab, type FlakyReport } from '../real/flaky.js';
import { ruleOfThree } from '../real/stats.js';

const HELP = `retrysim flaky [--runs N] [--variant V] [--slow-ms N] [--stagger-max-ms N] [--schedules-max N] [--seed N] [--json]

The flakiness lab (SPEC §7). One timing-dependent test — two workers file the
same report with the same idempotency key, the second U[0, stagger-max) ms
after the first; exactly one report must exist — run three ways:

  wall clock     N runs with real sleeps and real HTTP against a real server
                 process: k failures in N, with the exact one-sided 95 % upper
                 bound on the failure rate (0 in n: 1 − 0.05^(1/n); k > 0:
                 Clopper–Pearson)
  virtual time   the same test function, same seeds, through the fake-timers
                 bridge: the sleeps vanish, the outcome stays
  simulation     the same scenario on the kernel, every interleaving at every
                 stagger on a 1 ms grid, enumerated: which schedules fail

  --runs N            wall-clock and virtual-time runs, 1–10000 (default 30)
  --variant V         ${VARIANTS.join(' | ')} (default key_split)
  --slow-ms N         server processing time, 0–1000 ms (default 2)
  --stagger-max-ms N  second worker's start spread, 1–1000 ms (default 40)
  --schedules-max N   enumeration bound per stagger, 1–100000 (default 3000)
  --seed N            any integer (default 1)
  --json              the whole report as JSON`;


const pct = (x: number) => `${(100 * x).toFixed(2)} %`;

function print(r: FlakyReport): void {
  const o = r.options;
  const w = r.wallClock;
  const v = r.virtualTime;
  const s = r.simulated;
  console.log(`retrysim flaky — seed ${o.seed}; variant ${o.variant}, processing ${o.slowMs} ms, second worker U[0, ${o.staggerMaxMs}) ms later\n`);
  console.log(textTable(['approach', 'runs / schedules', 'failures', 'exact 95 % upper bound', 'wall time'], [
    ['wall clock (real sleeps, real HTTP)', w.runs, w.failures, pct(w.upperBound95), `${(w.wallMs / 1000).toFixed(2)} s`],
    ['same test on virtual time (fake timers)', v.runs, v.failures, pct(v.upperBound95), `${(v.wallMs / 1000).toFixed(2)} s (${(v.virtualMs / 1000).toFixed(2)} s virtual)`],
    [`simulation: every interleaving, ${s.staggers.length} staggers`, `${s.schedules}${s.complete ? '' : '+ (bounded)'}`, s.failing, 'n/a: enumerated, not sampled', `${(s.wallMs / 1000).toFixed(2)} s`],
  ]));
  const agree = w.perRun.filter((x, i) => x.failed === v.perRun[i]?.failed).length;
  console.log(`\nWall clock: ${w.failures}/${w.runs} failed. ${w.failures === 0
    ? `Passing ${w.runs} times proves little: the failure rate could still be up to ${pct(w.upperBound95)} (1 − 0.05^(1/${w.runs})); "3/n" would claim ${pct(ruleOfThree(w.runs))}.`
    : `The failure rate is at most ${pct(w.upperBound95)} with 95 % confidence (Clopper–Pearson).`}`);
  console.log(`Virtual time: the same test code ran ${(v.virtualMs / 1000).toFixed(2)} s of timers in ${(v.wallMs / 1000).toFixed(2)} s; ` +
    `${v.failures}/${v.runs} failed; ${agree}/${w.runs} runs had the same outcome as their wall-clock twin (same seed, same stagger; ` +
    'differences sit at the window edge, where real HTTP adds a millisecond or two).');
  const failingAt = s.staggers.filter((x) => x.failing > 0);
  console.log(`Simulation: ${s.failing} of ${s.schedules}${s.complete ? '' : '+'} schedules fail; a failure is possible at ` +
    `${failingAt.length}/${s.staggers.length} staggers (model-predicted failure rate ${pct(s.predictedRate)} for a uniform stagger):`);
  for (const x of failingAt) console.log(`  stagger ${x.staggerMs} ms: ${x.failing}/${x.schedules}${x.complete ? '' : '+'} schedules fail`);
  if (s.failingPatterns.length > 0) {
    console.log('Most common decisions at server steps in failing schedules (ties the kernel resolved; wN#R = worker N, request R):');
    for (const p of s.failingPatterns.slice(0, 5)) console.log(`  ${p.schedules}× at stagger ${p.staggerMs.join(', ')} ms: ${p.pattern}`);
    console.log('Each failing schedule is a list of choices: replay it exactly with ListChoice / a scenario file.');
  } else {
    console.log(`No schedule fails: ${o.variant} keeps exactly one report on every interleaving explored.`);
  }
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = flags('flaky', argv, {
      runs: { type: 'string' }, variant: { type: 'string' }, 'slow-ms': { type: 'string' }, 'stagger-max-ms': { type: 'string' },
      'schedules-max': { type: 'string' }, seed: { type: 'string' }, json: { type: 'boolean' },
    }, HELP);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values;
  let opts: Parameters<typeof runFlakyLab>[0] | undefined;
  const bad = await usage('flaky', async () => {
    if (values.variant !== undefined && !(VARIANTS as readonly string[]).includes(values.variant)) {
      throw new UsageError(`--variant must be one of ${VARIANTS.join(', ')}, got '${values.variant}'`);
    }
    // Bounds: every wall-clock run sleeps slow-ms and up to stagger-max-ms for real.
    opts = {
      runs: intFlag('runs', values.runs, 30, 1, 10_000),
      variant: (values.variant ?? 'key_split') as Variant,
      slowMs: intFlag('slow-ms', values['slow-ms'], 2, 0, 1000),
      staggerMaxMs: intFlag('stagger-max-ms', values['stagger-max-ms'], 40, 1, 1000),
      schedulesMax: intFlag('schedules-max', values['schedules-max'], 3000, 1, 100_000),
      seed: seedFlag(values.seed),
    };
    return 0;
  });
  if (bad !== 0 || opts === undefined) return bad;
  const r = await runFlakyLab(opts);
  if (values.json) console.log(JSON.stringify(r));
  else print(r);
  return 0;
}
