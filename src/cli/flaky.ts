import { flags, intFlag, seedFlag, usage, UsageError } from './args.js';
import { shellArg } from '../report/shell.js';
import { textTable } from '../report/table.js';
import { BUILTIN_SERVICES as VARIANTS, type BuiltinName as Variant } from '../tracker/builtin.js';
import { runFlakyLab, type FlakyReport } from '../real/flaky.js';
import { SETTLE_LIMIT_MS } from '../real/scenario-real.js';
import { ruleOfThree } from '../real/stats.js';
import { loadService } from '../service/load.js';
import { ServiceError } from '../service/errors.js';
import { plural } from '../service/noun.js';
import { isHostedApp } from '../app/define.js';
import { ClientError, loadClient } from '../client/load.js';
import type { RetryClient } from '../client/run.js';
import { runClientFlakyLab, type ClientFlakyOptions, type ClientFlakyReport } from '../real/flaky-client.js';

const HELP = `retrysim flaky [--runs N] [--variant V | --service PATH] [--slow-ms N] [--stagger-max-ms N]
               [--schedules-max N] [--seed N] [--json]
       retrysim flaky --client PATH [--name N] [--variant V | --service PATH] [--runs N] [--slow-ms N]
               [--spread-ms N] [--schedules-max N] [--seed N] [--json]

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
  --app PATH          your unmodified Node app (served for real by
                      \`retrysim serve --app PATH\`); its virtual-time runs are
                      each run's scenario, at that run's stagger, on the
                      simulation's host in one random order (an app's turns
                      are the host's to give, so the test function does not
                      drive it on the fake-timers bridge)
  --slow-ms N         server processing time, 0–1000 ms (default 2)
  --stagger-max-ms N  second worker's start spread, 1–1000 ms (default 40)
  --schedules-max N   enumeration bound per stagger, 1–100000 (default 3000)
  --seed N            any integer (default 1)
  --json              the whole report as JSON

With --client PATH (a module exporting a RetryClient, as for check --client;
--name picks an export), the test is your client's: it performs one
operation against the service (default the built-in key_atomic, a correct
endpoint, so what fails is the client) while the server takes
slow-ms + U[0, spread-ms) ms to answer — whether the client's own timeout
fires first depends on the run — judged by the client's checks
(stable-key, deadline, retry-after, non-retryable, backoff, progress) and
exactly-one on the effects: wall clock (the client's code, real timers,
Node's fetch, a real server), the same code on virtual time, and every
interleaving at every processing time on a 1 ms grid.
  --slow-ms N         with --client: the least processing time, 0–60000 ms (default 2)
  --spread-ms N       with --client: processing spread, 1–1000 ms (default 40)
Each side is judged with the checks a campaign judges (check --service):
exactly-one, id-exists, stable-key and replay-equals-first on every run's
attempts, answers and effects, and progress in the simulation when the
service declares it (after its recovery phase); tenant-isolation and
key-reuse are listed as not judged (one tenant, one body per key). The
built-in tracker's wall-clock and virtual-time runs judge exactly-one.
A run is judged once the work the service deferred past its answers is
done (a 202 whose effect a setTimeout writes), as the simulation fires such
a timer before judging: the wall-clock lane waits (up to 10 s; beyond, the
run is counted UNSETTLED) until the server has no request in flight and no
timer a handler armed pending; the virtual-time lane fires the pending
timers on virtual time.
Exit: 0 every invariant judged holds, 1 one fails (the table says which),
2 bad flags or a broken service, 4 inconclusive: nothing failed, but on
some side nothing was made (no run left a single effect) or, with --client,
no request was ever answered 2xx (a 401 or a 404 throughout) — every check
held vacuously.`;


const pct = (x: number) => `${(100 * x).toFixed(2)} %`;

function print(r: FlakyReport, noun: string, app: boolean): void {
  const o = r.options;
  const w = r.wallClock;
  const v = r.virtualTime;
  const s = r.simulated;
  const flag = app ? '--app' : '--service';
  const subject = o.service ? `${app ? 'app' : 'service'} ${o.service.name} (${o.service.module})` : `variant ${o.variant}`;
  console.log(`retrysim flaky — seed ${o.seed}; ${subject}, processing ${o.slowMs} ms, second worker U[0, ${o.staggerMaxMs}) ms later\n`);
  console.log(textTable(['approach', 'runs / schedules', 'failures', 'exact 95 % upper bound', 'wall time'], [
    ['wall clock (real sleeps, real HTTP)', w.runs, w.failures, pct(w.upperBound95), `${(w.wallMs / 1000).toFixed(2)} s`],
    [v.how === 'simulation host' ? 'same runs on virtual time (simulation host)' : 'same test on virtual time (fake timers)', v.runs, v.failures, pct(v.upperBound95), `${(v.wallMs / 1000).toFixed(2)} s (${(v.virtualMs / 1000).toFixed(2)} s virtual)`],
    [`simulation: every interleaving, ${s.staggers.length} staggers`, `${s.schedules}${s.complete ? '' : '+ (bounded)'}`, s.failing, 'n/a: enumerated, not sampled', `${(s.wallMs / 1000).toFixed(2)} s`],
  ]));
  if (w.unsettled > 0) console.log(`UNSETTLED: in ${w.unsettled}/${w.runs} wall-clock runs the server was still at work (a request, a timer a handler armed) after the ${SETTLE_LIMIT_MS / 1000} s settle limit; the effects were read then.`);
  const agree = w.perRun.filter((x, i) => x.failed === v.perRun[i]?.failed).length;
  // A lane in which nothing was made passed nothing: said so, not "passing 3 times proves little".
  if (w.failures === 0 && w.runs > 0 && w.perRun.every((x) => x.reports === 0)) console.log(`\nWall clock: 0/${w.runs} failed, but no run made any ${noun}, so passing says nothing (see the verdict).`);
  else console.log(`\nWall clock: ${w.failures}/${w.runs} failed. ${w.failures === 0
    ? `Passing ${w.runs} times proves little: the failure rate could still be up to ${pct(w.upperBound95)} (1 − 0.05^(1/${w.runs})); the "rule of three" (3/n), a large-n shortcut, would say ${pct(ruleOfThree(w.runs))}.`
    : `The failure rate is at most ${pct(w.upperBound95)} with 95 % confidence (Clopper–Pearson).`}`);
  // Said, not hidden: such a run's effects were read before the server's deferred work was done, so its failure may be the read's, not the service's.
  if (w.unsettled > 0) console.log(`UNSETTLED: in ${w.unsettled}/${w.runs} wall-clock runs the server was still at work (a request, a timer a handler armed) after the ${SETTLE_LIMIT_MS / 1000} s settle limit; their ${plural(noun)} were read then.`);
  console.log(`Virtual time: ${v.how === 'simulation host' ? `the same runs (same seeds, same staggers; each in one random order of the app's steps) ran ${(v.virtualMs / 1000).toFixed(2)} s of virtual time` : `the same test code ran ${(v.virtualMs / 1000).toFixed(2)} s of timers`} in ${(v.wallMs / 1000).toFixed(2)} s; ` +
    `${v.failures}/${v.runs} failed; ${agree}/${w.runs} runs had the same outcome as their wall-clock twin (same seed, same stagger; ` +
    'differences sit at the window edge, where real HTTP adds a millisecond or two).');
  console.log('\nInvariants (runs or schedules that broke each; -: not judged on that side):');
  console.log(textTable(['invariant', 'verdict', 'wall clock', 'virtual time', 'simulation'], r.invariants.map((x) => [
    x.invariant, x.verdict ?? `not judged: ${app ? x.notJudged!.replace('check --service', 'check --app') : x.notJudged}`, x.wallClock ?? '-', x.virtualTime ?? '-', x.simulated ?? '-',
  ])));
  for (const x of r.invariants) if (x.verdict === 'fails' && x.example !== undefined) console.log(`  ${x.invariant}: ${x.example}`);
  const failingAt = s.staggers.filter((x) => x.failing > 0);
  console.log(`Simulation: ${s.failing} of ${s.schedules}${s.complete ? '' : '+'} schedules fail; a failure is possible at ` +
    `${failingAt.length}/${s.staggers.length} staggers (model-predicted failure rate ${pct(s.predictedRate)} for a uniform stagger):`);
  for (const x of failingAt) console.log(`  stagger ${x.staggerMs} ms: ${x.failing}/${x.schedules}${x.complete ? '' : '+'} schedules fail`);
  const cut = s.staggers.filter((x) => !x.complete).length;
  if (cut > 0) console.log(`  +: the enumeration stopped at --schedules-max (${o.schedulesMax}) schedules at ${cut} of ${s.staggers.length} staggers; there are more schedules, so the counts there are lower bounds.`);
  if (s.failingPatterns.length > 0) {
    console.log('Most common decisions at server steps in failing schedules (ties the kernel resolved; wN#R = worker N, request R):');
    for (const p of s.failingPatterns.slice(0, 5)) console.log(`  ${p.schedules}× at stagger ${p.staggerMs.join(', ')} ms: ${p.pattern}`);
    // No file is written here: a CLI user has no ListChoice to hand, so the line points at what they can run.
    console.log(`The same bug as a shrunk, replayable scenario file: retrysim check ${o.service ? `${flag} ${shellArg(o.service.module)}` : `--variant ${o.variant}`} --explore exhaustive.`);
  } else {
    const held = r.invariants.filter((x) => x.simulated !== null).map((x) => x.invariant);
    // What the schedules left, not what they should have: a service that throws on every request keeps every invariant with none made.
    const c = s.effectCounts;
    const left = c.length === 1 && c[0] === 1 ? `exactly one ${noun} each time` : `${plural(noun)} left per schedule: ${c.join(', ')}${c.includes(0) ? '; where none was made, keeping them says nothing' : ''}`;
    console.log(`No schedule fails: ${o.service ? o.service.name : o.variant} keeps ${held.join(', ')} on every interleaving explored (${left}).`);
  }
  if (r.verdict === 'inconclusive') console.log(`Verdict: inconclusive — no invariant failed, but ${r.inconclusive}${o.service ? `; retrysim check ${flag} ${shellArg(o.service.module)} quotes the answers it gave` : ''}.`);
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const parsed = flags('flaky', argv, {
      runs: { type: 'string' }, variant: { type: 'string' }, 'slow-ms': { type: 'string' }, 'stagger-max-ms': { type: 'string' },
      'schedules-max': { type: 'string' }, seed: { type: 'string' }, json: { type: 'boolean' }, service: { type: 'string' },
      client: { type: 'string' }, name: { type: 'string' }, 'spread-ms': { type: 'string' }, app: { type: 'string' },
    }, HELP);
  if (typeof parsed === 'number') return parsed;
  const values = parsed.values;
  // `--app PATH` is `--service PATH` wherever that is taken (the README's word).
  if (values.app !== undefined) {
    if (values.service !== undefined) {
      console.error('retrysim flaky: give --service or --app, not both');
      return 2;
    }
    values.service = values.app;
  }
  if (values.client !== undefined) return runClient(values);
  const onlyClient = values.name !== undefined ? '--name' : values['spread-ms'] !== undefined ? '--spread-ms' : undefined;
  if (onlyClient !== undefined) {
    console.error(`retrysim flaky: ${onlyClient} needs --client PATH`);
    return 2;
  }
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
      const def = await loadService(values.service, { clock: 'real' }); // the lab's real lanes serve it in this process: the machine's clock
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
  else print(r, noun, opts.service !== undefined && isHostedApp(opts.service.def));
  // One truth: the exit code is the invariants table's verdict; a lab in which nothing was made on some side is no pass (4).
  return r.verdict === 'fails' ? 1 : r.verdict === 'inconclusive' ? 4 : 0;
}

/** `retrysim flaky --client PATH ...`: the lab on a user's retry client. */
async function runClient(values: Record<string, string | boolean | undefined>): Promise<number> {
  const str = (k: string) => values[k] as string | undefined;
  let opts: ClientFlakyOptions | undefined;
  const bad = await usage('flaky', async () => {
    if (str('client') === '') throw new UsageError('--client needs a module path');
    if (str('variant') !== undefined && str('service') !== undefined) throw new UsageError('give --variant (built in) or --service (your own), not both');
    if (str('variant') !== undefined && !(VARIANTS as readonly string[]).includes(str('variant')!)) throw new UsageError(`--variant must be one of ${VARIANTS.join(', ')}, got '${str('variant')}'`);
    // The two workers' stagger is the built-in test's knob; a client's test varies the server's processing time instead.
    if (str('stagger-max-ms') !== undefined) throw new UsageError('--stagger-max-ms is the two-worker test\'s knob; with --client use --spread-ms');
    opts = {
      client: undefined as unknown as RetryClient,
      clientModule: str('client')!,
      variant: (str('variant') ?? 'key_atomic') as Variant,
      runs: intFlag('runs', str('runs'), 30, 1, 10_000),
      slowMs: intFlag('slow-ms', str('slow-ms'), 2, 0, 60_000),
      spreadMs: intFlag('spread-ms', str('spread-ms'), 40, 1, 1000),
      schedulesMax: intFlag('schedules-max', str('schedules-max'), 3000, 1, 100_000),
      seed: seedFlag(str('seed')),
    };
    return 0;
  });
  if (bad !== 0 || opts === undefined) return bad;
  let r: ClientFlakyReport;
  try {
    opts.client = await loadClient(opts.clientModule, str('name'));
    if (str('service') !== undefined) opts = { ...opts, service: { def: await loadService(str('service')!, { clock: 'real' }), module: str('service')! } };
    r = await runClientFlakyLab(opts);
  } catch (e) {
    if (!(e instanceof ServiceError || e instanceof ClientError)) throw e;
    console.error(`retrysim flaky: ${e.message}`);
    return 2;
  }
  if (values.json) console.log(JSON.stringify(r));
  else printClient(r);
  // One truth: a check that failed on any side is the lab's verdict, and its exit code (it used to be 0 whatever failed);
  // a side on which the client never got through is no pass (exit 4, as check --client says inconclusive).
  return r.verdict === 'fails' ? 1 : r.verdict === 'inconclusive' ? 4 : 0;
}

function checksText(byCheck: Record<string, number>): string {
  const e = Object.entries(byCheck).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return e.length === 0 ? '-' : e.map(([k, n]) => `${k} ${n}`).join(', ');
}

function printClient(r: ClientFlakyReport): void {
  const o = r.options;
  const w = r.wallClock;
  const v = r.virtualTime;
  const s = r.simulated;
  console.log(`retrysim flaky --client ${o.clientModule} — seed ${o.seed}; retry client '${o.client}' against ${o.service}, the server taking ${o.slowMs} + U[0, ${o.spreadMs}) ms per request\n`);
  console.log(textTable(['approach', 'runs / schedules', 'failures', 'by check', 'exact 95 % upper bound', 'wall time'], [
    ['wall clock (real timers, real HTTP)', w.runs, w.failures, checksText(w.byCheck), pct(w.upperBound95), `${(w.wallMs / 1000).toFixed(2)} s`],
    ['same client on virtual time (fake timers)', v.runs, v.failures, checksText(v.byCheck), pct(v.upperBound95), `${(v.wallMs / 1000).toFixed(2)} s (${(v.virtualMs / 1000).toFixed(2)} s virtual)`],
    [`simulation: every interleaving, ${s.grid.length} processing times`, `${s.schedules}${s.complete ? '' : '+ (bounded)'}`, s.failing, checksText(s.byCheck), 'n/a: enumerated, not sampled', `${(s.wallMs / 1000).toFixed(2)} s`],
  ]));
  // A run in which no request got through passed nothing: said so, not "passed 3 of 3".
  if (w.failures === 0 && w.succeeded === 0 && w.runs > 0) console.log(`\nWall clock: no check failed in ${w.runs} of ${w.runs}, but no request was answered 2xx, so passing says nothing (see the verdict).`);
  else console.log(`\nWall clock: passed ${w.runs - w.failures} of ${w.runs}. ${w.failures === 0
    ? `Passing ${w.runs} of ${w.runs} proves little: the failure rate could still be up to ${pct(w.upperBound95)} (exact 95 % upper bound 1 − 0.05^(1/${w.runs})); the "rule of three" (3/n), a large-n shortcut, would say ${pct(ruleOfThree(w.runs))}.`
    : `The failure rate is at most ${pct(w.upperBound95)} with 95 % confidence (Clopper–Pearson).`}`);
  const agree = w.perRun.filter((x, i) => x.failed === v.perRun[i]?.failed).length;
  console.log(`Virtual time: ${v.failures}/${v.runs} failed; ${agree}/${w.runs} runs had the same outcome as their wall-clock twin (same processing time).`);
  const failingAt = s.grid.filter((g) => g.failing > 0);
  console.log(`Simulation: ${s.failing} of ${s.schedules}${s.complete ? '' : '+'} schedules fail; a failure is possible at ${failingAt.length}/${s.grid.length} processing times (model-predicted failure rate ${pct(s.predictedRate)} for a uniform processing time).`);
  for (const g of failingAt) console.log(`  processing ${g.processingMs} ms: ${g.failing}/${g.schedules}${g.complete ? '' : '+'} schedules fail`);
  const cut = s.grid.filter((g) => !g.complete).length;
  if (cut > 0) console.log(`  +: the enumeration stopped at --schedules-max (${o.schedulesMax}) schedules at ${cut} of ${s.grid.length} processing times; there are more schedules, so the counts there are lower bounds.`);
  if (failingAt.length === 0) console.log(`No schedule fails: client '${o.client}' keeps every check on every interleaving explored.`);
  // The verdict the exit code carries, in the table's words: which checks failed, on which side.
  const sides = [['wall clock', w.byCheck], ['virtual time', v.byCheck], ['simulation', s.byCheck]] as const;
  const failed = sides.filter(([, b]) => Object.keys(b).length > 0).map(([side, b]) => `${Object.keys(b).sort().join(', ')} (${side})`);
  console.log(r.verdict === 'fails' ? `Verdict: fails — ${failed.join('; ')}.`
    : r.verdict === 'inconclusive' ? `Verdict: inconclusive — no check failed, but ${r.inconclusive}.`
      : `Verdict: holds — no check failed on any side.`);
}
