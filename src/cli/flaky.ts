import { flags, intFlag, seedFlag, usage, UsageError } from './args.js';
import { textTable } from '../report/table.js';
import { BUILTIN_SERVICES as VARIANTS, type BuiltinName as Variant } from '../tracker/builtin.js';
import { runFlakyLab, type FlakyReport } from '../real/flaky.js';
import { ruleOfThree } from '../real/stats.js';
import { loadService } from '../service/load.js';
import { ServiceError } from '../service/errors.js';

const HELP = `retrysim flaky [--runs N] [--variant V | --service PATH] [--slow-ms N] [--stagger-max-ms N]
               [--schedules-max N] [--seed N] [--json]

The flakiness lab (SPEC §7). One timing-dependent test — two workers file the
same report with the same idempotency key, the second U[0, stagger-max) ms
after the first; exactly one report must exist — run three ways (with
--service, your service: the two workers send its operation, and exactly one
of its declared effects must exist):

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
  --service PATH      your own service module instead (served for real by
                      \`retrysim serve --service PATH\` for the wall-clock runs)
  --slow-ms N         server processing time, 0–1000 ms (default 2)
  --stagger-max-ms N  second worker's start spread, 1–1000 ms (default 40)
  --schedules-max N   enumeration bound per stagger, 1–100000 (default 3000)
  --seed N            any integer (default 1)
  --json              the whole report as JSON
Exit: 0 the lab ran (its table is the result), 2 bad flags or a broken service.`;


const pct = (x: number) => `${(100 * x).toFixed(2)} %`;

function print(r: FlakyReport, noun: string): void {
  const o = r.options;
  const w = r.wallClock;
  const v = r.virtualTime;
  const s = r.simulated;
  const subject = o.service ? `service ${o.service.name} (${o.service.module})` : `variant ${o.variant}`;
  console.log(`retrysim flaky — seed ${o.seed}; ${subject}, processing ${o.slowMs} ms, second worker U[0, ${o.staggerMaxMs}) ms later\n`);
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
    console.log(`No schedule fails: ${o.service ? o.service.name : o.variant} keeps exactly one ${noun} on every interleaving explored.`);
  }
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = flags('flaky', argv, {
      runs: { type: 'string' }, variant: { type: 'string' }, 'slow-ms': { type: 'string' }, 'stagger-max-ms': { type: 'string' },
      'schedules-max': { type: 'string' }, seed: { type: 'string' }, json: { type: 'boolean' }, service: { type: 'string' },
    }, HELP);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values;
  let opts: Parameters<typeof runFlakyLab>[0] | undefined;
  const bad = await usage('flaky', async () => {
    if (values.variant !== undefined && values.service !== undefined) throw new UsageError('give --variant (built in) or --service (your own), not both');
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
  let noun = 'report';
  if (values.service !== undefined) {
    try {
      const def = await loadService(values.service);
      opts = { ...opts, service: { def, module: values.service } };
      noun = def.effects.noun ?? 'effect';
    } catch (e) {
      if (!(e instanceof ServiceError)) throw e;
      console.error(`retrysim flaky: ${e.message}`);
      return 2;
    }
  }
  let r: FlakyReport;
  try {
    r = await runFlakyLab(opts);
  } catch (e) {
    // A service that breaks under the lab (a request never answered, an undeclared step) is the service's problem, named.
    if (!(e instanceof ServiceError)) throw e;
    console.error(`retrysim flaky: ${e.message}`);
    return 2;
  }
  if (values.json) console.log(JSON.stringify(r));
  else print(r, noun);
  return 0;
}
