import type { RunOptions } from '../scenario/run.js';
import { shellArg } from '../report/shell.js';
import type { DrawRun } from '../report/html/check-pages.js';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { flags, intFlag, usage, UsageError, writableDir, writableFile } from './args.js';
import { KEY_SOURCES, keySourceWords, type KeySource } from '../harness/keys.js';
import { loadService } from '../service/load.js';
import { freshServiceCopy } from '../service/fresh-copy.js';
import { isHostedApp, moduleFlag } from '../app/define.js';
import { parseServiceFaults, probeLeftOut, pctChoices, runServiceCampaign, serviceFaults, ServiceFaultsError, type ServiceCampaignResult, type ServiceExplore } from '../service/campaign.js';
import { NotRerunError, ServiceError } from '../service/errors.js';
import { stoppedRunLine, type StoppedRun } from '../service/stopped-run.js';
import { carriedFailureLine, carriedStateLine, FirstRuns } from '../app/carried-state.js';
import type { GeneratedCase } from '../scenario/arbitraries.js';
import type { ScenarioRun } from '../scenario/run.js';
import { textTable } from '../report/table.js';
import { firstFailureCell } from '../report/first-failure.js';
import { reasonsBlock } from './reasons.js';
import { neverReached, reachedText } from '../campaign/coverage.js';
import { sizeText } from '../scenario/arbitraries.js';
import { freshReplayProblem, serviceNotReproduced } from './fresh-replay.js';
import { serviceProgress } from './service-progress.js';
import { PER_PROCESS_ENV, perProcessFromEnv } from '../app/per-process.js';
import { MODULE_PROBE_RUNS, moduleStateLine, probeFoundLine, runModuleProbe, withoutScenario, type ModuleProbe } from '../app/module-probe.js';
import { runScenario } from '../scenario/run.js';
import { DEFAULT_SHRINK_BUDGET, parseDuration, parseShard, shardFromEnv, shardJson, shardRanLine } from './shard-args.js';
import { SERVICE_SHARD_FORMAT, type ServiceShardFile } from '../service/shard.js';
import type { ServiceDefinition } from '../service/definition.js';

const DEFAULT_RUNS = 10_000;
const DEFAULT_SCHEDULES = 20_000;
const FOUND_DIR = '.retrysim/found';
const HELP = `retrysim check --service PATH [--runs N] [--time-budget D] [--shrink-budget D] [--seed S] [--key-source K]
               [--faults LIST] [--explore random|pct|exhaustive] [--expect holds|fails] [--found DIR]
               [--shard I/N|auto --out FILE] [--html DIR] [--json]
retrysim check --app PATH ... [--module-probe-runs N]   (an unmodified Node app: --app is --service for it)

The property campaign against your own service (a TypeScript or JavaScript
module whose default export — or, without one, whose named export 'service' —
is a ServiceDefinition or an app descriptor; no other export is read; no
build step). The standard fault space — lost responses after commit and on
the way back, a crash at each declared crash point, slow steps and pauses at
each declared step, kill/restart (at a step, or as an answer leaves: the
work done, the process back without its memory), two instances on one
database, clock skew,
up to three concurrent duplicates, spans of minutes to hours, two tenants
with the same raw key, the same key with a different body — runs with the
built-in retrying client, and the service's declared effects are judged:
exactly one per logical operation (exactly-one), every acknowledged id
exists and is the operation's own (id-exists), stable keys (stable-key), no
request handed another tenant's result (tenant-isolation), a reused key with
another body refused (key-reuse), every success under one key the first
one's answer (replay-equals-first), and, if the service opts in, progress.
The service's Date, timers, Math.random and
crypto.randomUUID run on the run's virtual clock and seed; a handler that
throws answers 500 (one trace line) and the run goes on. A failure is
minimised and written as a replayable file; what the minimiser could not
show minimal is said. Progress goes to stderr: a bar on a terminal,
otherwise a line every 5 s (the runs, then the shrinking of a failure).

  --service PATH  the service module (required; or --app PATH)
  --runs N        generated scenarios (default ${DEFAULT_RUNS}); with --explore exhaustive:
                  schedules per small scenario (default ${DEFAULT_SCHEDULES})
  --time-budget D stop generating after this long (e.g. 90s, 10m, 1h; random and pct); with
                  --runs N, N scenarios at most; alone, as many as fit; either way a campaign
                  that ran fewer than N (default ${DEFAULT_RUNS}) is inconclusive (exit 4)
  --shrink-budget D  how long shrinking a failure may take (default ${DEFAULT_SHRINK_BUDGET}; e.g. 90s, 10m, 1h):
                  when it runs out, the failing case in hand is written (it replays) and said
                  to be not known to be minimal; the verdict is still fails (exit 1)
  --seed S        the campaign seed (default 1)
  --key-source K  where the client's Idempotency-Key comes from: ${KEY_SOURCES.map((k) => `${k} (${keySourceWords(k)})`).join(', ')};
                  default tool_call
  --faults LIST   only these faults, comma-separated (default: the whole space; the
                  names are printed at the start), e.g. --faults crash,loseResponse
  --explore M     random: fast-check-generated schedules (shrinkable, default)
                  pct: generated scenarios, PCT schedules (depth 3)
                  exhaustive: every schedule of the service's small scenarios (one
                  operation, at most one fault at each of its steps and crash points;
                  two tenants with one raw key, without a fault and with both answers
                  lost), with sleep-set reduction; stopped by the limit it is inconclusive
  --expect V      holds or fails: exit 0 only when the verdict is this one
  --shard I/N     run only shard I of N of the runs (random, pct; 1 <= I <= N; auto: from
                  RETRYSIM_SHARD=I/N or a CI's parallel-job variables), for machines or CI jobs;
                  every shard generates the whole campaign's cases and runs its own, so
                  'retrysim merge' of all N files gives the unsharded verdict, first failing run,
                  counterexample and coverage; a shard exits 0 when it ran
  --out FILE      write this run's result for 'retrysim merge' (with --shard)
  --module-probe-runs N  --app: how many of a holding campaign's first runs run again with the
                  app's modules loaded once per simulated process (default ${MODULE_PROBE_RUNS}; see below)
  --found DIR     where the counterexample goes (default ${FOUND_DIR}, git-ignored)
  --html DIR      also write DIR/index.html and the counterexample's stepper page
  --json          {service, module, keySource (the --key-source value), keys (it in words), seed, explore, faults, runs, timeBudgetMs, complete, verdict,
                   expected, ok, why, firstFailureRun, firstFailureMs, counterexample, shrunkSize,
                   violations, minimised, notMinimal, preemptionsMinimal, removed, replay, crashes,
                   coverage, neverReached,
                   moduleLoads (--app: once, or per-process when the verdict is the per-process one),
                   moduleProbe (--app: {runs, verdict} of the per-process probe, null when it did not run)}
                  exit 2 (the module cannot run as declared, or a run stopped): {service, module, keySource, keys,
                   seed, explore, verdict: "error", expected, ok: false, why, error, stopped: {run, shrinking, file,
                   replay} or null, counterexample: null}

An app's modules (its own files, its idempotency library) are loaded once for
the campaign, so what they keep at module level is shared by every simulated
instance and survives every simulated restart, as no two real processes share
it. A holding --app verdict is therefore checked again on its first ${MODULE_PROBE_RUNS} runs
(--module-probe-runs) with the modules loaded once per simulated process (the
table's 'module loads' column says what it covered); if that fails, the verdict
is fails (exit 1) with one line saying the app held only through shared module
state, and its counterexample file says "moduleLoads": "per-process", so
'retrysim replay' loads the app that way. Sharded, shard 1 runs the probe (its
runs are shard 1's own) and merge adopts its failure.
${PER_PROCESS_ENV}=1 runs a whole campaign that way (5-7x slower, memory
grows with each load).

Exit: 0 the verdict is holds (or --expect's), 1 it fails (or is not --expect's),
2 bad flags or a malformed service (one line names the problem: a module that
does not load or is not a service, an undeclared step, table or situation, a
request never answered because the handler awaits something outside the
simulation, a busy loop on the clock, a counterexample that does not
reproduce in a fresh process: state kept at module level, not in memory()),
4 inconclusive (an exhaustive search
stopped by its schedule limit: not every schedule ran; or no request of any
run was answered 2xx or made an effect: a service that does nothing breaks
no safety invariant). A handler that throws
is not exit 2: it answers 500 and the effects are judged. User code that
never returns the thread is stopped after RETRYSIM_WATCHDOG_MS (default 10 s)
with one line naming the request and step (by SIGKILL: exit 137).`;


/** `fails`, or `refuted` (the old word, still accepted) as its alias. */
function expectFlag(raw: string | undefined): 'holds' | 'fails' | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'holds' || raw === 'fails') return raw;
  if (raw === 'refuted') return 'fails';
  throw new UsageError(`--expect must be holds or fails, got '${raw}'`);
}

/** Why a row is not ✓, in the words `check` uses for built-in claims. */
function whyOf(r: ServiceCampaignResult, expected: 'holds' | 'fails' | undefined): string[] {
  const why: string[] = [];
  const want = expected ?? 'holds';
  if (r.verdict === 'inconclusive') why.push(`inconclusive: ${r.inconclusive ?? 'not every run was made'}`);
  else if (r.verdict !== want) why.push(`expected ${want}, got ${r.verdict}`);
  for (const p of r.counterexample?.notMinimal ?? []) why.push(`counterexample not minimal: ${p}`);
  return why;
}

/** `retrysim check --service ...`; resolves to the exit code. */
export async function run(argv: string[], again = false): Promise<number> {
  return usage('check', async () => {
    const a = flags('check', argv, {
      service: { type: 'string' },
      runs: { type: 'string' },
      'time-budget': { type: 'string' },
      'shrink-budget': { type: 'string' },
      seed: { type: 'string' },
      'key-source': { type: 'string' },
      faults: { type: 'string' },
      explore: { type: 'string' },
      expect: { type: 'string' },
      found: { type: 'string' },
      html: { type: 'string' },
      json: { type: 'boolean' },
      shard: { type: 'string' },
      out: { type: 'string' },
      'module-probe-runs': { type: 'string' },
    }, HELP);
    if (typeof a === 'number') return a;
    const v = a.values;
    if (v.service === undefined) throw new UsageError('--service PATH is required');
    const keySource = (v['key-source'] ?? 'tool_call') as KeySource;
    if (!KEY_SOURCES.includes(keySource)) throw new UsageError(`--key-source must be one of ${KEY_SOURCES.join(', ')}, got '${keySource}'`);
    const expected = expectFlag(v.expect);
    const explore = (v.explore ?? 'random') as ServiceExplore;
    if (!['random', 'pct', 'exhaustive'].includes(explore)) throw new UsageError(`--explore must be random, pct or exhaustive, got '${v.explore}'`);
    const runs = intFlag('runs', v.runs, explore === 'exhaustive' ? DEFAULT_SCHEDULES : DEFAULT_RUNS, 1);
    const timeBudgetMs = v['time-budget'] === undefined ? undefined : parseDuration('time-budget', v['time-budget']);
    if (timeBudgetMs !== undefined && explore === 'exhaustive') throw new UsageError('--time-budget is for generated campaigns (random, pct), not --explore exhaustive');
    const shrinkBudgetMs = parseDuration('shrink-budget', v['shrink-budget'] ?? DEFAULT_SHRINK_BUDGET);
    // A budget alone runs as many scenarios as fit; the verdict still needs the default count to hold.
    const maxRuns = timeBudgetMs !== undefined && v.runs === undefined ? 2 ** 31 - 1 : runs;
    const shard = v.shard === undefined ? undefined : v.shard === 'auto' ? shardFromEnv(process.env) : parseShard(v.shard);
    if (shard !== undefined && explore === 'exhaustive') throw new UsageError('--shard splits generated campaigns (random, pct); --explore exhaustive is not sharded');
    if (shard !== undefined && v.out === undefined) throw new UsageError('--shard needs --out FILE (merge the shards with retrysim merge)');
    if (v.out !== undefined && explore === 'exhaustive') throw new UsageError('--out writes a generated campaign (random, pct) for retrysim merge; --explore exhaustive is not sharded');
    const out = v.out === undefined ? undefined : writableFile('out', v.out);
    const seed = intFlag('seed', v.seed, 1);
    const probeRuns = intFlag('module-probe-runs', v['module-probe-runs'], MODULE_PROBE_RUNS, 1);
    const found = writableDir('found', v.found ?? FOUND_DIR);
    const html = v.html === undefined ? undefined : writableDir('html', v.html);
    const log = (s: string) => (v.json ? console.error(s) : console.log(s));
    // Searching again (per process, after a diverged search) the command's header is already on the screen.
    const head = again ? () => {} : log;
    let r: ServiceCampaignResult;
    let def: Awaited<ReturnType<typeof loadService>>;
    let reproduce = { before: '', after: '' };
    const perProcess = perProcessFromEnv();
    /** Set when the verdict held only with modules loaded once: the one line that says so. */
    let sharedModuleState: string | undefined;
    /** Whether the counterexample was found with one module load per process (its file says so, and replay loads it so). */
    let perProcessCx = perProcess;
    let probe: (() => Promise<ModuleProbe>) | undefined;
    /** What the per-process probe ran and found (the table's module-loads cell; a shard file's, for merge). */
    let probed: ModuleProbe | undefined;
    /** Takes the per-process campaign's result as the verdict, with the line that says why. */
    const adopt = (p: ModuleProbe, line: string) => {
      perProcessCx = true;
      sharedModuleState = line;
      r = p.result;
    };
    const wall0 = performance.now();
    let hostedApp = false;
    let serviceName: string | undefined;
    // Exit 2: one --json object and, for a stopped run, an --html index (reportStopped).
    const stoppedReport = (message: string, stopped: StoppedRun | undefined): Promise<2> =>
      reportStopped({ html, json: v.json === true, subject: `${hostedApp ? 'app' : 'service'} ${serviceName ?? v.service} (${v.service})`, message, stopped, ...(def !== undefined ? { draw: { service: def } } : {}) },
        { service: serviceName ?? null, module: v.service!, keySource, seed, explore, expected });
    try {
      def = await loadService(v.service);
      hostedApp = isHostedApp(def);
      serviceName = def.name;
      const faults = v.faults === undefined ? serviceFaults(def) : parseServiceFaults(def, v.faults);
      const amount = explore === 'exhaustive' ? `${runs} schedules max per small scenario`
        : timeBudgetMs !== undefined ? `${v.runs === undefined ? 'as many scenarios as fit' : `at most ${runs} scenarios`} in ${v['time-budget']} (${runs} for a verdict)` : `${runs} scenarios`;
      head(`retrysim check ${moduleFlag(def)} ${v.service} — ${isHostedApp(def) ? 'app' : 'service'} ${def.name}, seed ${seed}, ${amount}, explore ${explore}, ${keySourceWords(keySource)}${shard ? `, shard ${shard.index + 1}/${shard.count}` : ''}`);
      const leftOut = faults.includes('keyReuseProbe') ? undefined : probeLeftOut(def);
      const probeOff = leftOut !== undefined ? ` (no keyReuseProbe: ${leftOut})` : '';
      // A hosted app's steps are the store's commands, whichever it sends; its crash points, their lost answers.
      const points = isHostedApp(def)
        ? `steps: whichever of the store's commands it sends (${def.steps.join(', ')}), at its 1st to 4th use in a request (a kill's, on its instance); crash points: the answer of each, lost after the store ran it`
        : `steps: ${def.steps.join(', ')}; crash points: ${(def.crashPoints ?? []).join(', ') || 'none'}`;
      head(`faults: ${faults.join(', ')}${probeOff}; ${points}`);
      reproduce = { before: `retrysim check ${moduleFlag(def)} ${shellArg(v.service!)} --seed ${seed}`, after: `${explore !== 'random' ? ` --explore ${explore}` : ''}${v.faults !== undefined ? ` --faults ${faults.join(',')}` : ''}${keySource !== 'tool_call' ? ` --key-source ${keySource}` : ''}${v['shrink-budget'] !== undefined ? ` --shrink-budget ${v['shrink-budget']}` : ''}` };
      // With a budget the run count is known only at the end (the reproduce line then names it).
      if (timeBudgetMs === undefined) head(`reproduce: ${commandOf(reproduce, runs)}`);
      const clock = () => performance.now();
      const bar = serviceProgress({ what: `${isHostedApp(def) ? 'app' : 'service'} ${def.name}`, unit: explore === 'exhaustive' ? 'schedules' : 'runs', total: timeBudgetMs !== undefined && v.runs === undefined ? undefined : shard !== undefined || explore === 'exhaustive' ? undefined : maxRuns, json: v.json === true });
      // One module load per simulated process, on the first runs of the same seed and fault space (--module-probe-runs).
      probe = () => runModuleProbe({ module: v.service!, once: def, runs: Math.min(runs, probeRuns), seed, keySource, faults, explore: explore === 'exhaustive' ? 'random' : explore, shrinkBudgetMs, foundDir: found, clockMs: clock });
      // An app's first runs, run again once a holding campaign is over: module-level state that piled up over the runs shows there (carried-state.ts).
      // Sharded, shard 1 holds the campaign's first runs: it reruns them, and merge gives its line as check does.
      const firstRuns = isHostedApp(def) && !perProcess && (shard === undefined || shard.index === 0) && explore !== 'exhaustive' ? new FirstRuns(explore === 'pct' ? (c) => pctChoices(def, c) : undefined) : undefined;
      try {
        r = await runServiceCampaign({
          def, module: v.service, keySource, faults, explore, runs: maxRuns, atLeast: runs, ...(timeBudgetMs !== undefined ? { timeBudgetMs } : {}), shrinkBudgetMs, seed, foundDir: found, clockMs: clock,
          ...(shard !== undefined ? { slice: { shard: shard.index, shards: shard.count, worker: 0, workers: 1 } } : {}),
          onProgress: (n) => bar.run(n), onShrink: (n, at) => bar.shrink(n, at),
          ...(firstRuns !== undefined ? { onRun: (i: number, c: GeneratedCase, res: ScenarioRun) => firstRuns.note(i, c, res) } : {}),
        });
      } catch (e) {
        // A hosted app's failing run that passed when run again: state its modules keep carried over from
        // the runs before it (a module-level rate limiter's window, a cache). Loaded once per simulated process,
        // as real processes load them, the same first runs give the verdict separate processes would.
        if (!(e instanceof NotRerunError) || !isHostedApp(def) || perProcess || shard !== undefined) throw e;
        bar.stop();
        log(`module state: a failing run did not fail again when run a second time (state kept at module level carried over from the runs before it); the first ${Math.min(runs, probeRuns)} runs again with one module load per simulated process`);
        const again = await probe();
        probed = again;
        if (again.result.verdict === 'holds') {
          // Not a malformed app: per process its first runs hold, and the whole campaign needs loading that way.
          const failed = { run: e.failed?.run, invariants: e.failed?.invariants.join(', ') || 'an invariant' };
          r = { ...again.result, verdict: 'inconclusive', inconclusive: carriedFailureLine(def.name, failed, 'it passed when run again', again.runs, `${PER_PROCESS_ENV}=1 ${commandOf(reproduce, runs)}`) };
        } else if (again.result.verdict !== 'fails') throw e;
        else {
          r = again.result;
          adopt(again, moduleStateLine(def.name, 'carried', again));
        }
      } finally {
        bar.stop();
      }
      if (isHostedApp(def) && perProcess) log(`module loads: one per simulated process (${PER_PROCESS_ENV}=1): what the app keeps at module level is each process's own`);
      if (v['module-probe-runs'] !== undefined && !isHostedApp(def)) throw new ServiceError(def.name, `--module-probe-runs is for an app (--app): a service's modules are loaded once, and its per-process state is memory()`);
      // Shard 1 probes for the whole campaign: the probe's runs are the campaign's first, which are shard 1's own
      // (run indices are dealt in blocks of 64), and merge, which loads no module, adopts what it found. It probes
      // unless its own runs failed: a slice short of its share (a time budget) or without a success can still be
      // part of a campaign that holds.
      if (isHostedApp(def) && !perProcess && (shard === undefined ? r.verdict === 'holds' : shard.index === 0 && r.verdict !== 'fails')) {
        // Loaded once, the app's modules (its own file, its idempotency library) are shared by every simulated
        // instance and outlive every simulated restart; separate processes share none of it. A verdict
        // that holds only thanks to that sharing would tell the user a replicated app is safe.
        log(`module state: held with the app's modules loaded once for all simulated processes; the first ${Math.min(runs, probeRuns)} runs again with one load per process, as separate processes load them${shard !== undefined ? ' (for the whole campaign: merge judges it)' : ''}`);
        probed = await probe();
        const p = probed.result;
        if (p.verdict === 'fails' && shard === undefined) {
          // An exhaustive search's probe runs the random campaign's scenarios, which the search never ran: a failure
          // there that the modules loaded once show too is the app's, not its module state's.
          const failsOnce = explore === 'exhaustive' && p.counterexample !== undefined && (await runScenario(p.counterexample.scenario, { service: def })).violations.length > 0;
          adopt(probed, failsOnce ? probeFoundLine(def.name, probed) : moduleStateLine(def.name, 'shared', probed));
        }
        else if (p.verdict === 'fails') log(`module state: with one load per process it fails (run ${p.firstFailureRun ?? p.runs} of ${probed.runs}); merge gives the campaign's verdict`);
        else log(`module state: the same verdict with one load per process (${p.runs} runs)`);
      }
      if (firstRuns !== undefined && r.verdict === 'holds') {
        const moved = await firstRuns.recheck(def);
        if (moved !== undefined) r = { ...r, verdict: 'inconclusive', inconclusive: carriedStateLine(def.name, moved, `${PER_PROCESS_ENV}=1 ${commandOf(reproduce, runs)}`) };
      }
      const ran = r.verdict === 'fails' ? r.runs : r.generated ?? r.runs;
      // No run ran (the budget was spent first): `--runs 0` is no command; the verdict's own line says what to run.
      if (timeBudgetMs !== undefined && ran > 0) log(`reproduce: ${commandOf(reproduce, ran)}`);
    } catch (e) {
      // An app's exhaustive search whose runs went another way on one schedule: its modules keep state from one
      // run to the next (a rate limiter, a cache at the top of a file — a Lambda's handler keeps its own there).
      // The app is not malformed (a random campaign's verdict says inconclusive, not exit 2): search again with one
      // module load per simulated process, as separate processes load them — what the line told users to type.
      if (e instanceof ServiceError && e.divergedSearch && hostedApp && !perProcess && explore === 'exhaustive') {
        log(`module state: the search's runs went another way on one schedule (${e.divergedAt ?? 'a decision differed'}): state kept at module level lived on from one simulated run to the next; searching again with one module load per simulated process, as separate processes load them (${PER_PROCESS_ENV}=1)`);
        process.env[PER_PROCESS_ENV] = '1';
        try {
          return await run(argv, true);
        } finally {
          delete process.env[PER_PROCESS_ENV];
        }
      }
      if (e instanceof ServiceError) {
        console.error(`retrysim check: ${e.message}`);
        if (e.stopped !== undefined) console.error(stoppedRunLine(e.stopped));
        return stoppedReport(e.message, e.stopped);
      }
      if (e instanceof ServiceFaultsError) {
        console.error(`retrysim check: ${e.message}`);
        return 2;
      }
      throw e;
    }
    // The file must replay as its reader will run it: the printed line, without RETRYSIM_APP_PER_PROCESS (the file says how its modules load).
    const replays = (file: string) => freshReplayProblem(file, [moduleFlag(def), v.service!], { [PER_PROCESS_ENV]: '' });
    const probeFile = shard !== undefined ? probed?.result.counterexample?.file : undefined;
    if (probeFile !== undefined) {
      // Shard 1's probe counterexample is the campaign's when the shards hold: merge prints it as written.
      const problem = replays(probeFile);
      if (problem !== undefined) {
        rmSync(probeFile, { force: true });
        const line = serviceNotReproduced(def, problem);
        console.error(`retrysim check: ${line}`);
        return stoppedReport(line, undefined);
      }
    }
    /** A shard's counterexample that did not reproduce in a fresh process (an app's, whose probe then failed): why. */
    let notReproduced: string | undefined;
    const written = r.counterexample?.file;
    if (written !== undefined) {
      // One that does not replay is no counterexample, and is not left behind.
      const problem = replays(written);
      if (problem !== undefined) {
        rmSync(written, { force: true });
        // A hosted app's module-level state carried over from one run to the next: loaded once per
        // process, as real processes load it, the same runs give the verdict separate processes would.
        let fixed = false;
        if (isHostedApp(def) && !perProcessCx && probe !== undefined) {
          log(`module state: the counterexample did not reproduce in a fresh process (state kept at module level); the first ${Math.min(runs, probeRuns)} runs again with one module load per simulated process`);
          try {
            const again = await probe();
            const file = again.result.counterexample?.file;
            if (again.result.verdict === 'fails' && file !== undefined && replays(file) === undefined) {
              probed = again;
              // A shard's failure may not be the campaign's first: its file says what it found, and merge decides.
              if (shard === undefined) adopt(again, moduleStateLine(def.name, 'carried', again));
              else {
                notReproduced = problem;
                const { file: _gone, ...cx } = r.counterexample!;
                r = { ...r, counterexample: { ...cx, replay: '(removed: it did not reproduce in a fresh process; merge gives the campaign\'s verdict)' } };
                log(`module state: with one load per process it fails (run ${again.result.firstFailureRun ?? again.result.runs} of ${again.runs}); merge gives the campaign's verdict`);
              }
              fixed = true;
            } else if (again.result.verdict === 'holds' && shard === undefined) {
              // Its first runs hold per process: the once-loaded failure was what earlier runs left, and the app is not malformed.
              probed = again;
              const failed = { run: r.firstFailureRun, invariants: [...new Set(r.counterexample!.violations.map((x) => x.invariant))].join(', ') };
              r = { ...again.result, verdict: 'inconclusive', inconclusive: carriedFailureLine(def.name, failed, 'its counterexample did not reproduce in a fresh process', again.runs, `${PER_PROCESS_ENV}=1 ${commandOf(reproduce, runs)}`) };
              fixed = true;
            } else if (file !== undefined) rmSync(file, { force: true });
          } catch (e) {
            if (!(e instanceof ServiceError)) throw e;
          }
        }
        if (!fixed) {
          const line = serviceNotReproduced(def, problem);
          console.error(`retrysim check: ${line}`);
          return stoppedReport(line, undefined);
        }
      }
    }
    if (out !== undefined) {
      const file: ServiceShardFile = {
        format: SERVICE_SHARD_FORMAT, flag: moduleFlag(def) as '--service' | '--app', atLeast: runs, maxRuns, timeBudgetMs: timeBudgetMs ?? null, expect: expected ?? null,
        shard: shard ?? { index: 0, count: 1 }, wallMs: Math.round(performance.now() - wall0), reproduce, result: withoutScenario(r),
        // An app's: how its modules were loaded, and the per-process probe shard 1 ran for the campaign (merge adopts a failure of it).
        ...(isHostedApp(def) ? { moduleLoads: perProcess ? 'per-process' as const : 'once' as const } : {}),
        ...(probed !== undefined && shard !== undefined ? { moduleProbe: { runs: probed.runs, result: withoutScenario(probed.result) } } : {}),
        ...(notReproduced !== undefined ? { notReproduced } : {}),
      };
      writeFileSync(out, `${JSON.stringify(file, null, 1)}\n`);
      log(`results written to ${out}${shard ? ` (shard ${shard.index + 1}/${shard.count}: merge every shard's file with retrysim merge)` : ''}`);
    }
    const code = await reportServiceCampaign(r, { ...(sharedModuleState !== undefined ? { sharedModuleState } : {}), effects: { noun: def.effects.noun ?? 'effect', owner: def.effects.owner !== undefined }, moduleLoads: perProcessCx ? 'per-process' : 'once',
      ...(isHostedApp(def) ? { moduleProbe: shard !== undefined ? null : probed === undefined ? null : { runs: probed.runs, verdict: probed.result.verdict } } : {}), subject: `${isHostedApp(def) ? 'app' : 'service'} ${r.service} (${r.module})`, ...(shard !== undefined ? { shard } : {}), expected, json: v.json === true, timeBudgetMs, runs, reproduce, ...(html !== undefined ? { html, def: sharedModuleState !== undefined && probed?.def !== undefined ? probed.def : await pageService(def, v.service!, r.counterexample !== undefined) } : {}) });
    if (shard !== undefined) {
      log(shardRanLine(shard));
      return 0;
    }
    return code;
  });
}

/**
 * The service the counterexample's page is drawn with: a fresh copy of the module and its libraries
 * (src/service/fresh-copy.ts), so the page shows the run the file replays to, not one on the
 * module-level state the campaign's runs left behind.
 */
async function pageService(def: ServiceDefinition, module: string, failed: boolean): Promise<ServiceDefinition> {
  return failed ? (await freshServiceCopy(def, module)) ?? def : def;
}

/**
 * `--json` of a campaign that ended in exit 2: its service was broken, or a run stopped (a request never
 * answered, the run-time limit, a client stuck) — the stderr line as `error`, the written run as `stopped`.
 * The field names are the verdict object's; `verdict` is `error`.
 */
export function errorJson(o: { service?: string | null; client?: string | null; module: string; keySource?: KeySource; seed: number; explore: string; expected: 'holds' | 'fails' | undefined; message: string; stopped: StoppedRun | undefined }): Record<string, unknown> {
  return {
    ...(o.client !== undefined ? { client: o.client } : { service: o.service ?? null }), module: o.module,
    ...(o.keySource !== undefined ? { keySource: o.keySource, keys: keySourceWords(o.keySource) } : {}),
    seed: o.seed, explore: o.explore, verdict: 'error', expected: o.expected ?? 'holds', ok: false, why: [o.message], error: o.message,
    stopped: o.stopped === undefined ? null : { run: o.stopped.run, shrinking: o.stopped.shrinking, ...(o.stopped.exhaustive ? { exhaustive: true } : {}), file: o.stopped.file ?? null, replay: o.stopped.replay ?? null },
    // Not a counterexample: the stopped run's file expects no violation (it replays to the stop).
    counterexample: null,
  };
}

/**
 * Exit 2 of check --service/--app/--client (the module is broken, or a run stopped): `--json` gets one
 * object that says so, as the stderr line does (stdout was empty, and a script reading it had nothing to
 * parse); `--html` gets an index for a stopped run, which is a finding with a file (a module that cannot
 * run gets no page: nothing is written).
 */
export async function reportStopped(
  o: { html: string | undefined; json: boolean; subject: string; message: string; stopped: StoppedRun | undefined; draw?: RunOptions | DrawRun },
  fields: Omit<Parameters<typeof errorJson>[0], 'message' | 'stopped'>,
): Promise<2> {
  const { html, stopped, message } = o;
  if (html !== undefined && stopped !== undefined) {
    const { writeServiceCheckPages } = await import('../report/html/check-pages.js');
    // `draw`: how the written run is replayed for its page (the service's module, or the client's page writer).
    const pages = await writeServiceCheckPages(html, { subject: o.subject, verdict: 'error', runs: stopped.run, ok: false, error: { message, ...(stopped.file !== undefined ? { file: stopped.file } : {}), ...(stopped.replay !== undefined ? { replay: stopped.replay } : {}) } }, o.draw ?? {});
    if (pages.problem !== undefined) console.error(`retrysim check: --html: ${pages.problem}`);
    console.error(pages.written.length > 1 ? `wrote the run up to the stop and ${join(html, 'index.html')}` : `wrote ${join(html, 'index.html')}`);
  }
  if (o.json) console.log(JSON.stringify(errorJson({ ...fields, message, stopped })));
  return 2;
}

/** The table's `minimal` cell: yes, not shown, or not shown because the shrink budget stopped shrinking. */
export function minimalCell(cx: { notMinimal: readonly string[]; minimised: { stopped?: unknown } }): string {
  return cx.notMinimal.length === 0 ? 'yes' : cx.minimised.stopped !== undefined ? 'not shown (time limit)' : 'not shown';
}

/** The line under a counterexample whose shrinking the shrink budget stopped: what that means, and the flag that gives it longer. */
export function stoppedLine(cx: { minimised: { stopped?: { by: string } } }): string | undefined {
  const s = cx.minimised.stopped;
  return s === undefined ? undefined : `  not known to be minimal: shrinking stopped at its time limit (${s.by}); the counterexample fails and replays as written, and a longer --shrink-budget shrinks it further`;
}

/** The reproduce command for `n` runs. */
function commandOf(c: { before: string; after: string }, n: number): string {
  return `${c.before} --runs ${n}${c.after}`;
}

/** How {@link report} prints a service campaign: `check --service` after its run, `merge` after merging its shards. */
export interface ServiceReport {
  subject: string;
  expected: 'holds' | 'fails' | undefined;
  json: boolean;
  timeBudgetMs: number | undefined;
  /** The runs asked (a verdict needs them). */
  runs: number;
  reproduce: { before: string; after: string };
  html?: string;
  def?: ServiceDefinition;
  /** A hosted app whose verdict held only with its modules loaded once (the line `check` printed): the reason it fails. */
  sharedModuleState?: string;
  /** How the app's modules were loaded for the verdict: once for all simulated processes, or once per process. */
  moduleLoads?: 'once' | 'per-process';
  /**
   * An app's: what the per-process probe covered — its runs (the campaign's
   * first) and its verdict — or null when it did not run (a verdict other
   * than holds, the whole campaign per process, or one shard's table).
   */
  moduleProbe?: { runs: number; verdict: ServiceCampaignResult['verdict'] } | null;
  /** One shard's report (`--shard I/N`): its verdict covers its runs only, and the command exits 0 once it ran. */
  shard?: { index: number; count: number };
  /** What the definition declares of its effects: the noun, and whether `effects.owner` can say whose an id is. */
  effects?: { noun: string; owner: boolean };
}

/** The table's module-loads cell of an app: how its modules were loaded, and what ran with one load per process. */
function moduleLoadsCell(o: ServiceReport): string {
  const p = o.moduleProbe;
  if (o.moduleLoads === 'per-process' && p == null) return 'per process, every run';
  if (p == null) return 'once';
  if (o.moduleLoads === 'per-process') return `per process, runs 1–${p.runs}`;
  return `once; runs 1–${p.runs} per process: ${p.verdict}`;
}

/** Prints a service campaign's table (or `--json`), the counterexample and the coverage; resolves to the exit code. */
export async function reportServiceCampaign(r: ServiceCampaignResult, o: ServiceReport): Promise<number> {
  const unmet = whyOf(r, o.expected);
  const ok = unmet.length === 0;
  // The line that says the verdict is the per-process one leads the reasons — it is not one when that verdict is
  // the one expected (`--expect fails` on an app that fails per process was ok: false, exit 1).
  const why = !ok && o.sharedModuleState !== undefined ? [o.sharedModuleState, ...unmet] : unmet;
  const code = r.verdict === 'inconclusive' ? 4 : ok ? 0 : 1;
  const cx = r.counterexample;
  // Without --expect the verdict column already says it; the other reasons (inconclusive, not minimal) are news.
  const block = reasonsBlock(why, o.expected !== undefined);
  if (o.html !== undefined) {
    const { writeServiceCheckPages } = await import('../report/html/check-pages.js');
    const pages = await writeServiceCheckPages(o.html, { subject: o.subject, verdict: r.verdict, runs: r.runs, ok, ...(cx ? { counterexample: cx } : {}), ...(r.coverage ? { coverage: r.coverage } : {}), ...(block !== undefined ? { reasons: block } : {}) }, { ...(o.def ? { service: o.def } : {}) });
    if (pages.problem !== undefined) console.error(`retrysim check: --html: ${pages.problem}`);
    console.error(`wrote ${pages.written.length - 1} counterexample page(s) and ${join(o.html, 'index.html')}`);
  }
  if (o.json) {
    console.log(JSON.stringify({
      // keySource is the --key-source value (and a shard file's, which merge compares); keys says it in the service's words, as the table does.
      service: r.service, module: r.module, keySource: r.keySource, keys: keySourceWords(r.keySource), seed: r.seed, explore: r.explore, faults: r.faults, runs: r.runs,
      ...(o.timeBudgetMs !== undefined ? { timeBudgetMs: o.timeBudgetMs } : {}),
      ...(r.complete !== undefined ? { complete: r.complete } : {}),
      verdict: r.verdict, expected: o.expected ?? 'holds', ok, why,
      ...(o.moduleLoads !== undefined ? { moduleLoads: o.moduleLoads } : {}),
      ...(o.moduleProbe !== undefined ? { moduleProbe: o.moduleProbe } : {}),
      firstFailureRun: r.firstFailureRun ?? null,
      firstFailureMs: r.firstFailureMs === undefined ? null : Math.round(r.firstFailureMs),
      counterexample: cx?.file ?? null, shrunkSize: cx?.size ?? null,
      violations: cx ? [...new Set(cx.violations.map((x) => x.invariant))] : [],
      minimised: cx?.minimised ?? null, notMinimal: cx?.notMinimal ?? [],
      preemptionsMinimal: cx?.preemptionsMinimal ?? null, removed: cx?.removed ?? [], replay: cx?.replay ?? null, crashes: cx?.crashes ?? [],
      coverage: r.coverage ?? null, neverReached: r.coverage ? neverReached(r.coverage).map((x) => x.id) : [],
      ...shardJson(o.shard),
    }));
    return code;
  }
  console.log('');
  // An app's row says how its modules were loaded and what the per-process probe covered.
  const probeColumn = o.moduleProbe !== undefined;
  console.log(textTable(['', `${o.subject.startsWith('app ') ? 'app' : 'service'} / key source`, 'runs', ...(probeColumn ? ['module loads'] : []), 'verdict', 'first failure', 'shrunk to', 'minimal', 'counterexample'], [[
    // ? for inconclusive, as check's table and the --html index mark it: it did not hold, and nothing failed.
    ok ? '✓' : r.verdict === 'inconclusive' ? '?' : '✗',
    `${r.service} / ${keySourceWords(r.keySource)}`,
    `${r.runs}${r.complete === true && r.verdict === 'holds' ? ' (all)' : ''}`,
    ...(probeColumn ? [moduleLoadsCell(o)] : []),
    r.verdict,
    firstFailureCell(r, r.explore === 'exhaustive'),
    cx ? sizeText(cx.size) : '-',
    cx ? minimalCell(cx) : '-',
    cx?.file ?? '-',
  ]]));
  if (cx) {
    for (const x of cx.violations) console.log(`  ${x.invariant} (${x.op}): ${x.detail}`);
    // key-reuse is a keyed service's promise; one idempotent by its own ids (a PUT of a resource, last write wins) sends no key to reuse.
    if (cx.violations.every((x) => x.invariant === 'key-reuse') && r.faults.includes('keyReuseProbe')) {
      console.log(`  (a service idempotent without keys — a PUT of a resource by its own id, where the last write wins — makes no such promise: say so in its definition, operation: { readsKey: false, … }, and the probe is left out; or, for this run, --faults ${r.faults.filter((f) => f !== 'keyReuseProbe').join(',')})`);
    }
    // "No order exists" after a 2xx, with nothing to say whose the acknowledged id is: most often the service made it
    // and effects.of does not find it (a tenant stored as NULL, a column of another name), and the checks can only
    // say what of returned. Said where the reader is (the violation's own words stay what the checker saw).
    const e = o.effects;
    if (e !== undefined && !e.owner && cx.violations.some((x) => x.invariant === 'exactly-one' && x.detail === `the client was told it succeeded, but no ${e.noun} exists`)) {
      console.log(`  (if the service did make the ${e.noun}, effects.of does not find it: it is asked for the operation's runId and tenant — 'default' for a request sent without an x-tenant header; declare effects.owner(db, id) and the checks say whose an acknowledged id is)`);
    }
    // Not a fault of the scenario: the service's own code ended its process (Node's crash on an unhandled rejection).
    for (const c of cx.crashes) console.log(`  process crashed (${c.instance}): ${c.cause}`);
    if (cx.notMinimal.length === 0) console.log('  minimal: every one-step simplification was tried and none fails; no schedule with fewer preemptions fails');
    const stopped = stoppedLine(cx);
    if (stopped !== undefined) console.log(stopped);
    console.log(`  replay: ${cx.replay}`);
  }
  if (r.coverage !== undefined) console.log(`\n${reachedText(r.service, r.runs, r.coverage)}`);
  if (block !== undefined) console.log(`\n${block}`);
  // The verdict --expect asked for, found per process: still said (why the verdict is what it is).
  else if (o.sharedModuleState !== undefined) console.log(`\n${o.sharedModuleState}`);
  // A search the schedule limit stopped short: the command with a higher one finishes it.
  if (r.verdict === 'inconclusive' && r.complete === false && r.inconclusive?.startsWith('the schedule limit')) console.log(`to conclude: raise the schedule limit, e.g. ${commandOf(o.reproduce, Math.max(10 * o.runs, 1000))}`);
  // A budget that ran out before the count a verdict needs: that count, without the budget, concludes.
  if (r.verdict === 'inconclusive' && o.timeBudgetMs !== undefined && r.runs < o.runs) console.log(`to conclude: a longer --time-budget, or ${commandOf(o.reproduce, o.runs)}`);
  return code;
}
