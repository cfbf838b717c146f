import { rmSync, writeFileSync } from 'node:fs';
import { shellArg, shellLine } from '../report/shell.js';
import { join } from 'node:path';
import { flags, intFlag, usage, UsageError, writableDir, writableFile } from './args.js';
import { ClientError, freshClientLoader, loadClient } from '../client/load.js';
import { stoppedRunLine, type StoppedRun } from '../service/stopped-run.js';
import { CLIENT_FAULTS, CLIENT_FOUND_DIR, clientFaultProblem, ClientNotRerunError, runClientCampaign, type ClientCampaignResult } from '../client/campaign.js';
import { isNeverSucceeded } from '../client/coverage.js';
import type { FaultKind } from '../scenario/arbitraries.js';
import { loadService } from '../service/load.js';
import { isAppName, ServiceError } from '../service/errors.js';
import { BUILTIN_SERVICES as VARIANTS, type BuiltinName as Variant } from '../tracker/builtin.js';
import { textTable } from '../report/table.js';
import { firstFailureCell } from '../report/first-failure.js';
import { reasonsBlock } from './reasons.js';
import { neverReached, reachedText } from '../campaign/coverage.js';
import { sentDigest, type RetryClient } from '../client/run.js';
import { sizeText } from '../scenario/arbitraries.js';
import type { ServiceDefinition } from '../service/definition.js';
import { CLIENT_STATE_HOME, freshReplayProblem, notReproducedMessage } from './fresh-replay.js';
import { isHostedApp, moduleFlag } from '../app/define.js';
import { serviceProgress } from './service-progress.js';
import { DEFAULT_SHRINK_BUDGET, parseDuration, parseShard, shardFromEnv, shardJson, shardRanLine } from './shard-args.js';
import { CLIENT_SHARD_FORMAT, clientShardResult, type ClientShardFile, type ShardClientResult } from '../client/shard.js';
import { minimalCell, reportStopped, stoppedLine } from './check-service.js';
import { machinePerformanceNow } from '../sim/load-clock.js';
import { MODULE_PROBE_RUNS } from '../app/module-probe.js';
import { clientModuleStateLine } from '../client/module-state.js';
import { PER_PROCESS_ENV, perProcessFromEnv } from '../app/per-process.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';

/**
 * The machine's clock for the campaign's wall time (a shard file's
 * `wallMs`), taken before any run: a client run installs fake timers
 * process-wide (performance.now on virtual time) while it runs, and a run a
 * time budget interrupted may still be in flight when the wall time is read
 * (it read as negative, and merge refused the shard file).
 */
// The machine's clock even if read while a run's fakes are installed (a bound copy now follows them: src/sim/load-clock.ts).
const wallNow = machinePerformanceNow;

const DEFAULT_RUNS = 300;
/** Schedules per small scenario before an exhaustive search stops (its verdict is then inconclusive). */
const DEFAULT_SCHEDULES = 5000;

const HELP = `retrysim check --client PATH [--name N] [--variant V | --service PATH] [--runs N] [--time-budget D]
               [--shrink-budget D] [--seed S] [--faults LIST] [--explore random|pct|exhaustive] [--expect holds|fails] [--found DIR]
               [--shard I/N|auto --out FILE] [--html DIR] [--json]

The property campaign on your own retry client: a module exporting a
RetryClient ({ name, deadlineMs, run(fetch, op) }; TypeScript or JavaScript,
no build step). Each generated scenario runs the client on virtual time
with a fetch whose requests meet the simulated network's faults — lost
answers after a commit and on the way back, crashes, slow and paused
requests, kill/restart, two instances, 429 with Retry-After, a front end
answering 400/401/403/404/422 or 408/409/429/503, two operations alike in
content or start time — and judges:
progress (every call sends at least one request), stable-key (one key per
operation), key-reuse (two operations of one tenant never send one key,
one key never carries two bodies), deadline (settled and silent within
deadlineMs), retry-after (waits what a Retry-After asks), non-retryable
(never sends again after 400/401/403/404/422), backoff (no call retries
3+ times, each at the instant the failure came back), exactly-one, id-exists and
replay-equals-first on the service's effects and answers. A failure is shrunk,
minimised and written as a scenario file that \`retrysim replay FILE\`
reproduces; what the minimiser could not show minimal is said.

  --client PATH   the client module (required)
  --name N        which exported client (by its name); default the default export
  --variant V     the service it talks to, built in: ${VARIANTS.join(', ')} (default key_atomic,
                  a correct endpoint, so what fails is the client)
  --service PATH  ...or your own service module
  --runs N        generated scenarios (default ${DEFAULT_RUNS}); with --explore exhaustive:
                  schedules per small scenario (default ${DEFAULT_SCHEDULES})
  --time-budget D stop generating after this long (e.g. 90s, 10m; random and pct); with --runs N,
                  N scenarios at most; alone, as many as fit; either way a campaign that ran
                  fewer than N (default ${DEFAULT_RUNS}) is inconclusive (exit 4)
  --shrink-budget D  how long shrinking a failure may take (default ${DEFAULT_SHRINK_BUDGET}; e.g. 90s, 10m, 1h):
                  when it runs out, the failing case in hand is written (it replays) and said
                  to be not known to be minimal; the verdict is still fails (exit 1)
  --seed S        the campaign seed (default 1)
  --faults LIST   only these faults, comma-separated: ${CLIENT_FAULTS.join(', ')} (default all)
  --explore M     random: fast-check-generated schedules (default); pct: PCT schedules (depth 3);
                  exhaustive: every schedule of the client's small scenarios (one call; no fault,
                  or one lost answer, crash, slow or paused request, kill at each of the service's
                  steps, two instances, one 429 with Retry-After, one 400/422/409/503), up to
                  reordering service steps that commute (the client's own steps are opaque, so
                  every order of them runs); the schedule limit stopping it is inconclusive (4)
  --expect V      holds or fails: exit 0 only when the verdict is this one
  --shard I/N     run only shard I of N of the runs (random, pct; 1 <= I <= N; auto: from
                  RETRYSIM_SHARD=I/N or a CI's parallel-job variables), for machines or CI jobs;
                  every shard generates the whole campaign's cases and runs its own, so
                  'retrysim merge' of all N files gives the unsharded verdict, first failing run,
                  counterexample and coverage; a shard exits 0 when it ran
  --out FILE      write this run's result for 'retrysim merge' (with --shard)
  --found DIR     where the counterexample goes (default ${CLIENT_FOUND_DIR}, git-ignored)
  --html DIR      also write DIR/index.html and the counterexample's stepper page: the client's
                  own run (its requests, waits, answers, the faults, the check it breaks)
  --json          {client, module, seed, explore, faults, runs, complete (exhaustive), verdict, expected, ok, why, moduleLoads, firstFailureRun,
                   firstFailureMs, counterexample, shrunkSize, violations, minimised, notMinimal, replay, coverage, neverReached}
                  exit 2 (a module cannot run as declared, or a run stopped): {client, module, seed, explore,
                   verdict: "error", expected, ok: false, why, error, stopped: {run, shrinking, file, replay} or null,
                   counterexample: null}
                  moduleLoads: once, or per-process when the verdict is the per-process one

The client's module is loaded once for the campaign, so every call of every
run shares what it keeps at module level (a counter, a breaker, a retry
budget), where each client process — and each restart — has its own. A
holding verdict is therefore checked again on its first ${MODULE_PROBE_RUNS} runs with each
call (each worker) running from its own copy of the module; if that fails
(a key from a counter at module level: two processes both send order-1 for
two operations, key-reuse), the verdict is fails (exit 1) with one line
saying so, and its counterexample file says "moduleLoads": "per-process"
(client.moduleLoads), so \`retrysim replay\` loads the client that way
with no variable set. Sharded, shard 1 runs them for the whole campaign
and merge gives this verdict. ${PER_PROCESS_ENV}=1 runs a whole
campaign that way.

Exit: 0 the client holds (or the verdict is --expect's), 1 it fails
(or not --expect's verdict), 2 bad flags, a module that cannot be loaded,
or a client that cannot run on virtual time (it never settles), 4 inconclusive
(fewer scenarios ran than asked, the schedule limit stopped an exhaustive search, or no
request of any run was answered 2xx: a client that never succeeds keeps every check vacuously).`;

/** `retrysim check --client ...`; resolves to the exit code. */
export async function run(given: string[]): Promise<number> {
  // main.ts hands `--app X` over as `--service X`; every line that prints the command says --app, as typed.
  const argv = given.map((x, i) => (x === '--service' && given[i + 1] !== undefined && isAppName(given[i + 1]!) ? '--app' : x));
  return usage('check', async () => {
    const a = flags('check', given, {
      client: { type: 'string' },
      name: { type: 'string' },
      variant: { type: 'string' },
      service: { type: 'string' },
      runs: { type: 'string' },
      'time-budget': { type: 'string' },
      'shrink-budget': { type: 'string' },
      seed: { type: 'string' },
      faults: { type: 'string' },
      explore: { type: 'string' },
      expect: { type: 'string' },
      found: { type: 'string' },
      html: { type: 'string' },
      json: { type: 'boolean' },
      shard: { type: 'string' },
      out: { type: 'string' },
    }, HELP);
    if (typeof a === 'number') return a;
    const v = a.values;
    if (v.client === undefined || v.client === '') throw new UsageError('--client PATH is required');
    if (v.variant !== undefined && v.service !== undefined) throw new UsageError('give --variant (built in) or --service (your own), not both');
    if (v.variant !== undefined && !(VARIANTS as readonly string[]).includes(v.variant)) throw new UsageError(`--variant must be one of ${VARIANTS.join(', ')}, got '${v.variant}'`);
    if (v.expect !== undefined && !['holds', 'fails', 'refuted'].includes(v.expect)) throw new UsageError(`--expect must be holds or fails, got '${v.expect}'`);
    // 'refuted', the old word, is read as fails.
    const expected = v.expect === undefined ? undefined : v.expect === 'holds' ? 'holds' : 'fails';
    const explore = v.explore ?? 'random';
    if (explore !== 'random' && explore !== 'pct' && explore !== 'exhaustive') throw new UsageError(`--explore must be random, pct or exhaustive, got '${explore}'`);
    const faults = v.faults === undefined ? [...CLIENT_FAULTS] : parseClientFaults(v.faults);
    const runs = intFlag('runs', v.runs, explore === 'exhaustive' ? DEFAULT_SCHEDULES : DEFAULT_RUNS, 1, 1_000_000);
    const timeBudgetMs = v['time-budget'] === undefined ? undefined : parseDuration('time-budget', v['time-budget']);
    if (timeBudgetMs !== undefined && explore === 'exhaustive') throw new UsageError('--time-budget is for generated campaigns (random, pct), not --explore exhaustive');
    const shrinkBudgetMs = parseDuration('shrink-budget', v['shrink-budget'] ?? DEFAULT_SHRINK_BUDGET);
    // A budget alone: as many runs as fit (a verdict still needs the default count).
    const maxRuns = timeBudgetMs !== undefined && v.runs === undefined ? 2 ** 31 - 1 : runs;
    const shard = v.shard === undefined ? undefined : v.shard === 'auto' ? shardFromEnv(process.env) : parseShard(v.shard);
    if (shard !== undefined && explore === 'exhaustive') throw new UsageError('--shard splits generated campaigns (random, pct); --explore exhaustive is not sharded');
    if (shard !== undefined && v.out === undefined) throw new UsageError('--shard needs --out FILE (merge the shards with retrysim merge)');
    if (v.out !== undefined && explore === 'exhaustive') throw new UsageError('--out writes a generated campaign (random, pct) for retrysim merge; --explore exhaustive is not sharded');
    const out = v.out === undefined ? undefined : writableFile('out', v.out);
    const seed = intFlag('seed', v.seed, 1);
    const found = writableDir('found', v.found ?? CLIENT_FOUND_DIR);
    const html = v.html === undefined ? undefined : writableDir('html', v.html);
    const log = (s: string) => (v.json ? console.error(s) : console.log(s));
    let r!: ClientCampaignResult; // the campaign's, or the per-process one adopt() takes
    let client: RetryClient;
    let service: ServiceDefinition | undefined;
    let against = '';
    const wall0 = wallNow();
    const perProcess = perProcessFromEnv();
    /** Whether the verdict's runs loaded the client once per simulated client process (its counterexample replays only so). */
    let perProcessCx = perProcess;
    /** Set when the verdict changed with one load per process: the one line that says why. */
    let sharedModuleState: string | undefined;
    const replayModules = () => ['--client', v.client!, ...(service && v.service !== undefined ? [moduleFlag(service), v.service] : [])];
    // The file must replay as its reader will run it: the printed line, without RETRYSIM_APP_PER_PROCESS (the file's client.moduleLoads says how the client loads).
    // The same run, too: the trace the campaign found (and printed) is the one the file must give.
    const replays = (file: string, found?: ClientCampaignResult) => freshReplayProblem(file, replayModules(), { [PER_PROCESS_ENV]: '' }, found?.counterexample === undefined ? undefined : { field: 'sentHash', value: sentDigest(found.counterexample.run) });
    let probe: (() => Promise<{ sample: number; p: ClientCampaignResult }>) | undefined;
    /** Shard 1's per-process probe for the campaign (merge adopts its failure when every shard holds). */
    let shardProbe: { sample: number; p: ClientCampaignResult } | undefined;
    /** Takes the per-process campaign's result as the verdict, with the line that says why. */
    const adopt = (p: ClientCampaignResult, line: string) => {
      perProcessCx = true;
      sharedModuleState = line;
      r = p;
    };
    let clientName: string | undefined;
    const stoppedReport = (message: string, stopped: StoppedRun | undefined): Promise<2> =>
      reportStopped({ html, json: v.json === true, subject: `retry client '${clientName ?? v.client}' (${v.client})${against !== '' ? ` against ${against}` : ''}`, message, stopped,
        // The stopped run's page: its file replayed as a counterexample's is (replay --client --html draws the same).
        draw: async (out, s, source) => (await import('../report/html/write.js')).writeClientStepperPage(out, s, client, source, { strictReplay: true, ...(service ? { service } : {}), ...(perProcessCx ? { perProcess: freshClientLoader(v.client!, client.name) } : {}) }) },
        { client: clientName ?? null, module: v.client!, seed, explore, expected });
    try {
      // Its top level reads the instant every run starts at (its files' client.epochMs), as a fresh copy's does in a run.
      client = await loadClient(v.client, v.name, { epochMs: SIM_EPOCH_MS });
      clientName = client.name;
      service = v.service === undefined ? undefined : await loadService(v.service);
      against = service ? `${isHostedApp(service) ? 'app' : 'service'} ${service.name} (${v.service})` : `built-in ${v.variant ?? 'key_atomic'}`;
      const size = explore === 'exhaustive' ? `every schedule of its small scenarios (at most ${runs} each)`
        : timeBudgetMs !== undefined ? `${v.runs === undefined ? 'as many scenarios as fit' : `at most ${runs} scenarios`} in ${v['time-budget']} (${runs} for a verdict)` : `${runs} scenarios`;
      log(`retrysim check --client ${v.client} — client '${client.name}' against ${against}, seed ${seed}, ${size}${shard ? `, shard ${shard.index + 1}/${shard.count}` : ''}`);
      // With a budget the run count is known only at the end: the reproduce line then names the runs that ran.
      if (timeBudgetMs === undefined) log(`reproduce: ${perProcess ? `${PER_PROCESS_ENV}=1 ` : ''}retrysim check ${shellLine(argv)}`);
      if (perProcess) log(`module loads: one per simulated client process (${PER_PROCESS_ENV}=1): each call of the client runs from its own copy of its module, as in a process of its own`);
      const target = { ...(service ? { service, serviceModule: v.service } : { variant: (v.variant ?? 'key_atomic') as Variant }) };
      const loader = freshClientLoader(v.client, client.name);
      const bar = serviceProgress({ what: `client ${client.name}`, unit: explore === 'exhaustive' ? 'schedules' : 'runs', total: explore === 'exhaustive' || maxRuns !== runs || shard !== undefined ? undefined : runs, json: v.json === true });
      /** A once-loaded campaign whose failing case did not fail again: state carried from run to run (tried per process below). */
      let notRerun: ClientNotRerunError | undefined;
      try {
        r = await runClientCampaign({
          client, module: v.client, runs: maxRuns, atLeast: runs, ...(timeBudgetMs !== undefined ? { timeBudgetMs } : {}), seed, foundDir: found, faults, explore,
          // The machine's clock, read by the CLI between runs only (never by the simulated code).
          shrinkBudgetMs, clockMs: () => performance.now(), ...target,
          ...(perProcess ? { perProcess: loader } : {}),
          ...(shard !== undefined ? { slice: { shard: shard.index, shards: shard.count, worker: 0, workers: 1 } } : {}),
          onProgress: (n) => bar.run(n), onShrink: (n, at) => bar.shrink(n, at),
        });
      } catch (e) {
        if (!(e instanceof ClientNotRerunError) || perProcess || shard !== undefined) throw e;
        notRerun = e;
      } finally {
        bar.stop();
      }
      // The first runs of the same seed and fault space, each call from its own copy of the module (MODULE_PROBE_RUNS).
      probe = async () => {
        const sample = Math.min(runs, MODULE_PROBE_RUNS);
        // Exhaustive scenarios make one call each: per process, only the carry-over from one schedule to the next would go; generated ones make two.
        return { sample, p: await runClientCampaign({ client, module: v.client, runs: sample, seed, foundDir: found, faults, explore: explore === 'exhaustive' ? 'random' : explore, shrinkBudgetMs, clockMs: () => performance.now(), ...target, perProcess: loader }) };
      };
      if (notRerun !== undefined) {
        // A budget or breaker at module level, drained or tripped by earlier runs: each client process has its own.
        log(`module state: the failing case did not fail again (state kept at module level or in the client object carried over from run to run); the first ${Math.min(runs, MODULE_PROBE_RUNS)} runs again with one load per simulated client process`);
        const { sample, p } = await probe();
        const file = p.counterexample?.file;
        if (p.verdict !== 'fails' || file === undefined || replays(file, p) !== undefined) {
          if (file !== undefined) rmSync(file, { force: true });
          if (p.verdict === 'holds') log(`module state: with one load per client process the first ${p.runs} runs hold`);
          throw notRerun;
        }
        adopt(p, clientModuleStateLine(client.name, 'carried', p, sample));
      } else if (!perProcess && shard !== undefined && shard.index === 0 && r.verdict !== 'fails') {
        // Shard 1 probes for the whole campaign: the probe's runs are the campaign's first, which are shard 1's own
        // (run indices are dealt in blocks of 64), and merge, which loads no module, adopts what it found. It probes
        // unless its own runs failed: a slice short of its share (a time budget) or without a success can still be
        // part of a campaign that holds.
        log(`module state: held with the client's module loaded once for every call; the first ${Math.min(runs, MODULE_PROBE_RUNS)} runs again with one load per simulated client process (for the whole campaign: merge judges it)`);
        shardProbe = await probe();
        const p = shardProbe.p;
        if (p.verdict === 'fails') log(`module state: with one load per client process it fails (run ${p.firstFailureRun ?? p.runs} of ${shardProbe.sample}); merge gives the campaign's verdict`);
        else log(`module state: with one load per client process the first ${p.runs} runs ${p.verdict === 'holds' ? 'hold' : `are inconclusive (${p.inconclusive ?? 'fewer ran'})`}`);
      } else if (!perProcess && r.verdict === 'holds' && shard === undefined) {
        // Loaded once, the client's module is shared by every call of every run: a key from a counter at module
        // level never repeats there, where two client processes (or one restarted) both count from 1.
        log(`module state: held with the client's module loaded once for every call; the first ${Math.min(runs, MODULE_PROBE_RUNS)} runs again with one load per simulated client process (each call its own), as separate processes load it`);
        const { sample, p } = await probe();
        if (p.verdict === 'fails') adopt(p, clientModuleStateLine(client.name, 'shared', p, sample));
        else if (p.verdict === 'holds') log(`module state: the same verdict with one load per client process (${p.runs} runs)`);
        // Inconclusive per process (no 2xx in its fewer runs): no evidence either way, the verdict stands.
        else log(`module state: with one load per client process the first ${p.runs} runs are inconclusive (${p.inconclusive ?? 'fewer ran'}); the verdict stands`);
      }
      // No run ran (the budget was spent first): nothing to reproduce; the "to conclude" line gives the command.
      if (timeBudgetMs !== undefined && r.runs > 0) log(`reproduce: ${perProcess ? `${PER_PROCESS_ENV}=1 ` : ''}retrysim check ${shellLine(withRuns(argv, r.runs))}`);
    } catch (e) {
      if (e instanceof ClientError || e instanceof ServiceError) {
        console.error(`retrysim check: ${e.message}`);
        if (e.stopped !== undefined) console.error(stoppedRunLine(e.stopped));
        return stoppedReport(e.message, e.stopped);
      }
      throw e;
    }
    const probeFile = shardProbe?.p.counterexample?.file;
    if (probeFile !== undefined) {
      // Shard 1's probe counterexample is the campaign's when the shards hold: merge prints it as written.
      const problem = replays(probeFile, shardProbe!.p);
      if (problem !== undefined) {
        rmSync(probeFile, { force: true });
        const line = notReproducedMessage(`client '${client!.name}'`, problem, CLIENT_STATE_HOME);
        console.error(`retrysim check: ${line}`);
        return stoppedReport(line, undefined);
      }
    }
    const written = r.counterexample?.file;
    if (written !== undefined) {
      // The file must replay as its reader will run it; one that does not is no counterexample, and is not left behind.
      const problem = replays(written, r);
      if (problem !== undefined) {
        rmSync(written, { force: true });
        // State kept at module level carried over from one run to the next: with one load per client process,
        // as real processes load it, the same first runs give the verdict separate processes would.
        let fixed = false;
        /** Runs that held with one load per client process: the verdict separate processes give, as far as it went. */
        let heldPerProcess: number | undefined;
        if (!perProcessCx && shard === undefined && probe !== undefined) {
          log(`module state: the counterexample did not reproduce in a fresh process (state kept at module level); the first ${Math.min(runs, MODULE_PROBE_RUNS)} runs again with one load per simulated client process`);
          try {
            const { sample, p } = await probe();
            const file = p.counterexample?.file;
            if (p.verdict === 'fails' && file !== undefined && replays(file, p) === undefined) {
              adopt(p, clientModuleStateLine(client.name, 'carried', p, sample));
              fixed = true;
            } else {
              if (file !== undefined) rmSync(file, { force: true });
              if (p.verdict === 'holds') {
                heldPerProcess = p.runs;
                log(`module state: with one load per client process the first ${p.runs} runs hold`);
              }
            }
          } catch (e) {
            if (!(e instanceof ClientError || e instanceof ServiceError)) throw e;
          }
        }
        if (!fixed) {
          // A breaker or a retry budget is module-level by design: "keep it inside run()" is no advice for it. What
          // judges it is the campaign run as separate processes would, which the variable does (the probe held).
          const home = heldPerProcess === undefined ? CLIENT_STATE_HOME
            : `with one load per simulated client process (each call its own, as separate processes load it) its first ${heldPerProcess} runs hold, so what failed it is state its calls share (a breaker or a retry budget meant to span calls is each real process's own); for the verdict of separate processes on every run: ${PER_PROCESS_ENV}=1 retrysim check ${argv.join(' ')}`;
          const line = notReproducedMessage(`client '${client.name}'`, problem, home);
          console.error(`retrysim check: ${line}`);
          return stoppedReport(line, undefined);
        }
      }
    }
    if (out !== undefined) {
      const file: ClientShardFile = {
        format: CLIENT_SHARD_FORMAT, module: v.client, against, command: campaignCommand(argv), atLeast: runs, maxRuns, timeBudgetMs: timeBudgetMs ?? null, expect: expected ?? null,
        shard: shard ?? { index: 0, count: 1 }, wallMs: Math.round(wallNow() - wall0), result: clientShardResult(r), ...(perProcessCx ? { moduleLoads: 'per-process' as const } : {}),
        ...(shardProbe !== undefined ? { moduleProbe: { runs: shardProbe.sample, result: clientShardResult(shardProbe.p) } } : {}),
      };
      writeFileSync(out, `${JSON.stringify(file, null, 1)}\n`);
      log(`results written to ${out}${shard ? ` (shard ${shard.index + 1}/${shard.count}: merge every shard's file with retrysim merge)` : ''}`);
    }
    if (html !== undefined) {
      const cx = r.counterexample;
      const why = whyOf(r, expected);
      const ok = why.length === 0;
      const reasons = reasonsBlock(why, expected !== undefined);
      const { writeServiceCheckPages } = await import('../report/html/check-pages.js');
      const { writeClientStepperPage } = await import('../report/html/write.js');
      const svc = service;
      // The page replays the written file strictly, as \`retrysim replay --html\` would: it shows the very run found.
      const pages = await writeServiceCheckPages(html, { subject: `retry client '${r.client}' (${v.client}) against ${against}`, verdict: r.verdict, runs: r.runs, ok, ...(cx ? { counterexample: { ...cx, violations: cx.violations } } : {}), ...(r.coverage ? { coverage: r.coverage } : {}), ...(reasons !== undefined ? { reasons } : {}) },
        (out, s, source) => writeClientStepperPage(out, s, client, source, { strictReplay: true, ...(svc ? { service: svc } : {}), ...(perProcessCx ? { perProcess: freshClientLoader(v.client!, client.name) } : {}) }));
      if (pages.problem !== undefined) console.error(`retrysim check: --html: ${pages.problem}`);
      console.error(`wrote ${pages.written.length - 1} counterexample page(s) and ${join(html, 'index.html')}`);
    }
    // The schedule limit stops an exhaustive client campaign short: the same search with a higher one finishes it.
    const target = service !== undefined ? ` ${moduleFlag(service)} ${shellArg(v.service!)}` : v.variant !== undefined ? ` --variant ${v.variant}` : '';
    const raiseLimit = `retrysim check --client ${shellArg(v.client!)}${v.name !== undefined ? ` --name ${shellArg(v.name)}` : ''}${target} --seed ${seed} --explore ${explore} --runs ${Math.max(10 * runs, 1000)}${v.faults !== undefined ? ` --faults ${faults.join(',')}` : ''}`;
    const code = reportClientCampaign(r, { module: v.client, ...(shard !== undefined ? { shard } : {}), expected, json: v.json === true, timeBudgetMs, runs, command: argv, raiseLimit, moduleLoads: perProcessCx ? 'per-process' : 'once', ...(sharedModuleState !== undefined ? { sharedModuleState } : {}) });
    if (shard !== undefined) {
      log(shardRanLine(shard));
      return 0;
    }
    return code;
  });
}

/** Why a client campaign's row is not ✓. */
function whyOf(r: ShardClientResult, expected: 'holds' | 'fails' | undefined): string[] {
  const why: string[] = [];
  if (r.verdict === 'inconclusive') why.push(`inconclusive: ${r.inconclusive ?? 'fewer scenarios ran than asked'}`);
  else if (r.verdict !== (expected ?? 'holds')) why.push(`expected ${expected ?? 'holds'}, got ${r.verdict}`);
  for (const p of r.counterexample?.notMinimal ?? []) why.push(`counterexample not minimal: ${p}`);
  return why;
}

/** How {@link reportClientCampaign} prints: `check --client` after its run, `merge` after merging its shards. */
export interface ClientReport {
  /** The client's module, as given to `--client`. */
  module: string;
  expected: 'holds' | 'fails' | undefined;
  json: boolean;
  timeBudgetMs: number | undefined;
  /** The runs asked (a verdict needs them). */
  runs: number;
  /** The campaign's arguments after `check` (the "to conclude" line's command). */
  command: readonly string[];
  /** The command that finishes an exhaustive search its limit stopped (not for a merge: exhaustive is not sharded). */
  raiseLimit?: string;
  /** How the client's module was loaded for the verdict's runs: once for every call, or once per simulated client process (default once). */
  moduleLoads?: 'once' | 'per-process';
  /** A verdict that changed with one load per client process (the line `check` printed): why it fails. */
  sharedModuleState?: string;
  /** One shard's report (`--shard I/N`): its verdict covers its runs only, and the command exits 0 once it ran. */
  shard?: { index: number; count: number };
}

/** Prints a client campaign's table (or `--json`), the counterexample and the coverage; returns the exit code. */
export function reportClientCampaign(r: ShardClientResult, o: ClientReport): number {
  const cx = r.counterexample;
  const unmet = whyOf(r, o.expected);
  const ok = unmet.length === 0;
  // The line that says the verdict is the per-process one leads the reasons (it is not one when the verdict is the one expected).
  const why = !ok && o.sharedModuleState !== undefined ? [o.sharedModuleState, ...unmet] : unmet;
  const code = r.verdict === 'inconclusive' ? 4 : ok ? 0 : 1;
  const invariants = cx ? [...new Set(cx.violations.map((x) => x.invariant))] : [];
  if (o.json) {
    console.log(JSON.stringify({
      client: r.client, module: o.module, seed: r.seed, explore: r.explore, faults: r.faults, runs: r.runs, ...(r.complete !== undefined ? { complete: r.complete } : {}), verdict: r.verdict, expected: o.expected ?? 'holds', ok, why, moduleLoads: o.moduleLoads ?? 'once',
      firstFailureRun: r.firstFailureRun ?? null,
      firstFailureMs: r.firstFailureMs === undefined ? null : Math.round(r.firstFailureMs),
      counterexample: cx?.file ?? null, shrunkSize: cx?.size ?? null, violations: invariants,
      minimised: cx?.minimised ?? null, notMinimal: cx?.notMinimal ?? [], replay: cx?.replay ?? null,
      coverage: r.coverage ?? null, neverReached: r.coverage ? neverReached(r.coverage).map((x) => x.id) : [],
      ...shardJson(o.shard),
    }));
    return code;
  }
  console.log('');
  console.log(textTable(['', 'client', r.explore === 'exhaustive' ? 'schedules' : 'runs', 'verdict', 'first failure', 'shrunk to', 'minimal', 'counterexample'], [[
    ok ? '✓' : r.verdict === 'inconclusive' ? '?' : '✗', r.client, r.explore === 'exhaustive' ? `${r.runs}${r.complete ? ' (all)' : ''}` : r.runs, r.verdict,
    firstFailureCell(r, r.explore === 'exhaustive'),
    cx ? sizeText(cx.size, 'request') : '-',
    cx ? minimalCell(cx) : '-',
    cx?.file ?? '-',
  ]]));
  if (cx) {
    for (const w of cx.run.workers) for (const q of w.sent) console.log(`  ${w.name}  t=${q.atMs.toFixed(0)} ms  ${q.method} ${q.path}  key=${q.key ?? '(none)'}  → ${q.outcome ?? 'no answer'}${q.retryAfter !== undefined ? ` (Retry-After: ${q.retryAfter})` : ''}`);
    for (const x of cx.violations) console.log(`  ${x.invariant} (${x.op}): ${x.detail}`);
    const stopped = stoppedLine(cx);
    if (stopped !== undefined) console.log(stopped);
    console.log(`  replay: ${cx.replay}`);
  }
  if (r.coverage !== undefined) console.log(`\n${reachedText(r.client, r.runs, r.coverage)}`);
  // Without --expect the verdict column already says it; the other reasons (inconclusive, not minimal) are news.
  const block = reasonsBlock(why, o.expected !== undefined);
  if (block !== undefined) console.log(`\n${block}`);
  // The verdict --expect asked for, found per process: still said (why the verdict is what it is).
  else if (o.sharedModuleState !== undefined) console.log(`\n${o.sharedModuleState}`);
  // More runs or schedules conclude nothing when no request ever succeeded: the reason above says what to do.
  if (r.verdict === 'inconclusive' && isNeverSucceeded(r.inconclusive)) {
    // nothing to add
  } else if (r.verdict === 'inconclusive' && o.timeBudgetMs !== undefined && r.explore !== 'exhaustive') {
    console.log(`to conclude: give it the runs, e.g. retrysim check ${withRuns(o.command, o.runs).join(' ')}`);
  } else if (r.verdict === 'inconclusive' && o.raiseLimit !== undefined) {
    console.log(`to conclude: raise the schedule limit, e.g. ${o.raiseLimit}`);
  }
  return code;
}

/** The campaign's arguments without the flags that differ between its shards or only say where output goes (`--shard`, `--out`, `--found`, `--html`, `--json`). */
function campaignCommand(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--json') continue;
    if (a === '--shard' || a === '--out' || a === '--found' || a === '--html') {
      i++;
      continue;
    }
    if (/^--(shard|out|found|html)=/.test(a)) continue;
    out.push(a);
  }
  return out;
}

/** The command line with `--time-budget` and `--runs` replaced by `--runs n` (what ran, so the line reproduces it). */
function withRuns(args: readonly string[], n: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--time-budget' || a === '--runs') {
      i++;
      continue;
    }
    if (a.startsWith('--time-budget=') || a.startsWith('--runs=')) continue;
    out.push(a);
  }
  return [...out, '--runs', String(n)];
}

/** A `--faults` list for a client: names from {@link CLIENT_FAULTS}, or one line naming them. */
function parseClientFaults(list: string): FaultKind[] {
  const names = list.split(',').map((x) => x.trim()).filter((x) => x !== '');
  if (names.length === 0) throw new UsageError(`--faults needs at least one of ${CLIENT_FAULTS.join(', ')}`);
  for (const n of names) {
    const problem = clientFaultProblem(n);
    if (problem !== undefined) throw new UsageError(`--faults: ${problem}`);
  }
  return [...new Set(names)] as FaultKind[];
}
