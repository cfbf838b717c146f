import { existsSync, realpathSync, statSync } from 'node:fs';
import { shellArg } from '../report/shell.js';
import { basename, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { flags, UsageError, writableFile } from './args.js';
import { stoppedPages, writeClientStepperPage, writeStepperPage } from '../report/html/write.js';
import { loadScenario, ScenarioError } from '../scenario/load.js';
import { matchesExpect, runScenario } from '../scenario/run.js';
import { ReplayDivergenceError } from '../sim/choice/replay.js';
import { loadService } from '../service/load.js';
import { isHostedApp, moduleFlag } from '../app/define.js';
import { ServiceError } from '../service/errors.js';
import type { ServiceDefinition } from '../service/definition.js';
import { DeadlockError, SimLimitError } from '../sim/errors.js';
import { ClientError, freshClientLoader, loadClient } from '../client/load.js';
import { runClientScenario, sentDigest, type ClientRun } from '../client/run.js';
import { PER_PROCESS_ENV, perProcessOverride } from '../app/per-process.js';
import type { Scenario } from '../scenario/schema.js';
import { setupLines } from '../scenario/setup-lines.js';
// The trace's setup lines are shared with the stepper page (src/report/html/stepper-data.ts).
export { setupLines } from '../scenario/setup-lines.js';
import { plural } from '../service/noun.js';
import { keySourceWords } from '../harness/keys.js';

const HELP = `retrysim replay FILE [--service PATH | --app PATH] [--client PATH] [--trace] [--json] [--html OUT.html]

Runs a scenario file exactly as recorded and checks its 'expect'. The
recorded schedule is a contract: a decision at another time or among other
candidates, a decision the file does not record (an empty schedule allows
none), a recorded decision the run never reaches, or a changed preemption
flag is divergence — the run is stopped there, never continued on another
interleaving.
  --service PATH  the user service the file was found against (default: the
            module the file names, service.module)
  --client PATH   for a file found for your own retry client (client.name):
            its module (default: the module the file names, client.module)
  --app PATH      --service PATH for a file found against an unmodified Node app
  --trace   one line per event: time, actor, what happened, DB effect
            (on divergence: the run up to the diverging decision)
  --json    {"file", "name", "seed", "moduleLoads" (a hosted app or retry client whose file or environment says it), "reports", "violations", "traceHash", "sentHash" (a retry client's file: what it sent and got, without other headers' values), "expectMet", "problems"}
            or, on divergence, {"file", "name", "seed", "diverged": {index, kind, message, expected, actual}}
  --html F  also write the run as a self-contained stepper page (sequence diagram, DB rows per step);
            F a folder (DIR/, or one that exists): DIR/<the file's name>.html, as check --html DIR names it;
            for a retry client's file, the client's run: its requests, waits, answers and the check it breaks
A hosted app's modules load as the file says (service.moduleLoads: 'per-process',
afresh for each simulated process, as check found it; absent: once for the run),
and a retry client's module likewise (client.moduleLoads: 'per-process', afresh
for each simulated client call); RETRYSIM_APP_PER_PROCESS=1 or 0 overrides the file.
Clocks start where the file says: a service's Date at service.epochMs, a retry
client's (its module's load too) at client.epochMs; absent, 1970, as found.
A file is validated in full before any module is loaded, and the modules it
names are imported only from inside the current directory tree; a module
elsewhere runs only when you name it with --service / --client yourself.
Exit: 0 the outcome matches expect, 1 it does not, 2 a bad file, bad flags or
a module outside this directory the command line did not name, 3 the run
diverged from the recorded schedule.`;

/**
 * An answer line as a reader wants it: the body the service sent, not that
 * body escaped inside the trace's data (`answer 201 {"report_id":1} (replay)`
 * for `answer 201 {"body":"{\\"report_id\\":1}","replay":true}`). The trace
 * itself keeps its form: its hash, and every file's recorded hash, are of it.
 * A body with a line break or another control character stays a JSON string,
 * so that one answer is still one line; an empty one says so.
 */
function readableAnswer(l: string): string {
  const m = /^(\s*[\d.]+ ms  \S+\s+answer \d{3}) (\{"body":.*\})$/.exec(l);
  if (m === null) return l;
  let d: unknown;
  try {
    d = JSON.parse(m[2]!);
  } catch {
    return l;
  }
  const { body, replay, ...rest } = d as { body?: unknown; replay?: unknown };
  if (typeof body !== 'string' || (replay !== undefined && replay !== true) || Object.keys(rest).length > 0) return l;
  const shown = body === '' ? '(empty body)' : /[\u0000-\u001f\u007f]/.test(body) ? JSON.stringify(body) : body;
  return `${m[1]} ${shown}${replay === true ? ' (replay)' : ''}`;
}

/**
 * The timeline as a reader wants it: a decision that lets the running task
 * continue is the default and says nothing (the file's schedule lists every
 * decision), while a preemption is the moment that matters and is spelled out;
 * an answer shows its body as sent (readableAnswer).
 */
export function readableTimeline(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const l of lines) {
    const m = /^(\s*[\d.]+ ms  )kernel\s+choose (\{.*\})$/.exec(l);
    if (m === null) {
      out.push(readableAnswer(l));
      continue;
    }
    const d = JSON.parse(m[2]!) as { chosen: string; of: string[]; preempted?: boolean };
    if (d.preempted) out.push(`${m[1]}${'kernel'.padEnd(14)} PREEMPTION: ${d.of[0]} could continue; ${d.chosen} runs instead`);
  }
  return out;
}

/**
 * The command that reproduces a replay: `retrysim replay [--client C]
 * [--service|--app S] FILE`, naming every user module the run loaded. A file
 * records its modules, but replay imports one a file names only from inside
 * the current directory tree, so a line without them would not run from
 * anywhere else. A built-in file's is `retrysim replay FILE`. The first line
 * of the text, the divergence hint and the `--html` page's reproduce line
 * (with `--trace`) are this one command.
 */
export function replayCommand(file: string, o: { client?: string; service?: ServiceDefinition; servicePath?: string } = {}): string {
  const client = o.client !== undefined ? `--client ${shellArg(o.client)} ` : '';
  const service = o.service !== undefined && o.servicePath !== undefined ? `${moduleFlag(o.service)} ${shellArg(o.servicePath)} ` : '';
  return `retrysim replay ${client}${service}${shellArg(file)}`;
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const a = flags('replay', argv, { trace: { type: 'boolean' }, json: { type: 'boolean' }, html: { type: 'string' }, service: { type: 'string' }, client: { type: 'string' } }, HELP, true);
  if (typeof a === 'number') return a;
  const { values, positionals } = a;
  // Several files are most often a shell pattern (`NAME-*.json`, as the docs write a hash the reader does not
  // know) that matched a second campaign's file too: name them, in one line, rather than print the usage.
  if (positionals.length > 1) {
    console.error(`retrysim replay: expected one scenario file, got ${positionals.length} (${positionals.join(', ')}): a pattern like NAME-*.json matched more than one; name one of them (the 'replay:' line check printed names its file)`);
    return 2;
  }
  if (positionals.length !== 1) {
    console.error(`retrysim replay: expected exactly one scenario file, got ${positionals.length}\n\n${HELP}`);
    return 2;
  }
  const file = positionals[0]!;
  try {
    // A folder (one that exists, or a path ending in '/') takes the page as check --html names it: the file's name, .html.
    if (values.html !== undefined) {
      const page = pageInFolder(values.html, file);
      values.html = page.newFolder ? page.path : writableFile('html', page.path);
    }
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`retrysim replay: ${e.message}`);
    return 2;
  }
  let scenario;
  try {
    scenario = loadScenario(file);
  } catch (e) {
    if (e instanceof ScenarioError) {
      console.error(`retrysim replay: ${e.message}`);
      return 2;
    }
    throw e;
  }
  let service: ServiceDefinition | undefined;
  const modulePath = values.service ?? scenario.service.module;
  if (values.service !== undefined && scenario.service.module === undefined) {
    console.error(`retrysim replay: ${file} runs the built-in variant '${scenario.service.variant}', not a user service; drop --service`);
    return 2;
  }
  // The file is data: it may name code to run only inside this directory
  // tree; anything else runs only when named on the command line.
  const kind = serviceKind(scenario);
  const untrusted = untrustedModule(file, kind, values.service, scenario.service.module, values.client, scenario.client.module)
    ?? (scenario.client.name !== undefined ? untrustedModule(file, 'client', values.client, scenario.client.module, values.service, scenario.service.module, kind) : undefined);
  if (untrusted !== undefined) {
    console.error(`retrysim replay: ${untrusted}`);
    return 2;
  }
  const missing = missingModule(file, kind, values.service, scenario.service.module)
    ?? (scenario.client.name !== undefined ? missingModule(file, 'client', values.client, scenario.client.module) : undefined);
  if (missing !== undefined) {
    console.error(`retrysim replay: ${missing}`);
    return 2;
  }
  if (values.client !== undefined || scenario.client.name !== undefined) {
    return replayClient(file, scenario, values.client, modulePath, { trace: values.trace === true, json: values.json === true, html: values.html });
  }
  let r;
  let command = `retrysim replay ${file}`;
  const loads = moduleLoads(scenario);
  try {
    if (modulePath !== undefined) service = await loadService(modulePath, { perProcess: loads.perProcess });
    const notApp = service !== undefined && !isHostedApp(service) ? notAnApp(file, scenario, modulePath!) : undefined;
    if (notApp !== undefined) {
      console.error(`retrysim replay: ${notApp}`);
      return 2;
    }
    command = replayCommand(file, { ...(service ? { service } : {}), ...(modulePath !== undefined ? { servicePath: modulePath } : {}) });
    const opts = { keepTrace: values.trace === true, strictReplay: true, replayHint: command, ...(service ? { service } : {}) };
    // With --html the one run is observed: the page and this output describe the same run,
    // and the page's reproduce line is this very command (the module flag included), as check's pages give it.
    r = values.html === undefined ? await runScenario(scenario, opts) : await writeStepperPage(values.html, scenario, { file, replay: `${command} --trace` }, opts);
  } catch (e) {
    // A module named on the command line that is not the one the file names is the likeliest cause of a divergence: say so.
    // A file with no schedule at all (hand-written, or its `schedule` cut out) diverges at its first decision: that, not a changed module, is why.
    const other = scenario.schedule.length === 0 && e instanceof ReplayDivergenceError
      ? '; the file records no schedule (its `schedule` is missing or empty), and replay follows a recorded one exactly: a file check writes records every decision of its run'
      : values.service !== undefined && scenario.service.module !== undefined && resolve(values.service) !== resolve(scenario.service.module)
      ? `; the file was found against ${scenario.service.module}, and this replay ran ${values.service}${FIX_HINT}`
      // The same module path: the likeliest change is the user's own edit of it (a fix), which the generic "inputs changed" does not name.
      : modulePath !== undefined && service !== undefined ? `; if ${modulePath} changed since the file was found${FIX_HINT}` : '';
    const code = replayFailed(e, file, scenario, { json: values.json === true, trace: values.trace === true, command, other });
    if (code === undefined) throw e;
    return code;
  }
  const m = matchesExpect(scenario, r, service ? service.effects.noun ?? 'effect' : 'report');
  if (values.html !== undefined) console.error(`wrote ${values.html}`);
  if (values.json) {
    console.log(JSON.stringify({ file, name: scenario.name, seed: scenario.seed, ...(loads.said && service !== undefined && isHostedApp(service) ? { moduleLoads: loads.perProcess ? 'per-process' : 'once' } : {}), reports: r.reports, violations: r.violations, traceHash: r.result.traceHash, expectMet: m.ok, problems: m.problems }));
    return m.ok ? 0 : 1;
  }
  console.log(command);
  // A user's service is told its keys in words; the built-in tracker's row keeps its variant/keySource name (its claims and files are named so).
  console.log(`scenario: ${scenario.name} — run seed ${scenario.seed}, ${service ? `${isHostedApp(service) ? 'app' : 'service'} ${service.name} (${modulePath}), ${keySourceWords(scenario.client.keySource)}` : `${scenario.service.variant}/${scenario.client.keySource}`}`);
  if (scenario.description) console.log(`  ${scenario.description}`);
  if (loads.said && service !== undefined && isHostedApp(service)) console.log(`module loads: ${loads.perProcess ? 'one per simulated process (what the app keeps at module level is each process\'s own)' : 'once for the run (shared by every simulated process)'} — ${loads.by}`);
  for (const l of setupLines(scenario)) console.log(l);
  if (values.trace) {
    console.log('\ntimeline:');
    for (const l of readableTimeline(r.trace)) console.log('  ' + l);
    // The progress invariant is judged on this phase: without it a `progress`
    // violation ("18 resubmission(s) got no success") names requests the reader never sees.
    if (r.recoveryTrace.length > 0) {
      // Its kernel starts at 0 ms and its resubmissions wait until the main run's end plus settleMs: the `spawn` at
      // 0 ms read as a phase that began before the main run ended.
      console.log('\nrecovery (after the faults stopped — none strike here: its tasks start at 0 ms and send once the main run has ended and progress.settleMs has passed; judged by progress, not part of the recorded schedule):');
      for (const l of readableTimeline(r.recoveryTrace)) console.log('  ' + l);
    }
  }
  console.log('\nattempts:');
  for (const op of r.operations) {
    for (const a of [...op.attempts].sort((x, y) => x.startMs - y.startMs)) {
      const o = a.outcome.kind === 'http' ? `HTTP ${a.outcome.status}` : a.outcome.reason;
      console.log(`  ${a.worker ?? op.id} ${a.toolUseId}#${a.attempt} t=${a.startMs.toFixed(1)}→${a.endMs.toFixed(1)} ms key=${a.key ?? '-'} ${o}` +
        `${a.reportId !== undefined ? ` ${service ? `${service.effects.noun ?? 'effect'}_id` : 'report_id'}=${a.reportId}` : ''}${a.replay ? ' (replay)' : ''}`);
    }
  }
  console.log(`\n${service ? plural(service.effects.noun ?? 'effect') : 'reports'} held: ${Object.entries(r.reports).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  console.log(r.violations.length === 0 ? 'invariants: all hold' : 'violations:\n' + r.violations.map((v) => `  ${v.invariant} (${v.op}): ${v.detail}`).join('\n'));
  console.log(scheduleLine(r.result.choices, r.result.traceHash));
  console.log(m.ok ? 'expect: met' : ['expect: NOT met', ...m.problems, ...fixedHint(scenario, r.violations, modulePath)].join('\n  '));
  return m.ok ? 0 : 1;
}

/**
 * How a replay loads a hosted app's modules: as the file says
 * (`service.moduleLoads`; absent: once), unless RETRYSIM_APP_PER_PROCESS
 * (1 or 0) overrides it. `said`: the file or the environment said it, so the
 * output names it (a file without the field replays byte-identical).
 */
export function moduleLoads(s: Scenario): { perProcess: boolean; said: boolean; by: string } {
  const env = perProcessOverride();
  if (env !== undefined) return { perProcess: env, said: true, by: `${PER_PROCESS_ENV}=${env ? 1 : 0}${s.service.moduleLoads !== undefined && (s.service.moduleLoads === 'per-process') !== env ? `, over the file's service.moduleLoads '${s.service.moduleLoads}'` : ''}` };
  return { perProcess: s.service.moduleLoads === 'per-process', said: s.service.moduleLoads !== undefined, by: `the file's service.moduleLoads` };
}

/**
 * How a replay loads a retry client's module: as the file says
 * (`client.moduleLoads`; absent: once), unless RETRYSIM_APP_PER_PROCESS
 * (1 or 0) overrides it, as for an app's. `said`: the file or the
 * environment said it, so the output names it (a file without the field
 * replays byte-identical); `overridden`: the variable decided against, or
 * without, the file's word.
 */
export function clientModuleLoads(s: Scenario): { perProcess: boolean; said: boolean; overridden: boolean; by: string } {
  const env = perProcessOverride();
  const file = s.client.moduleLoads;
  if (env !== undefined) {
    const overridden = file === undefined ? env : (file === 'per-process') !== env;
    return { perProcess: env, said: true, overridden, by: `${PER_PROCESS_ENV}=${env ? 1 : 0}${file !== undefined && (file === 'per-process') !== env ? `, over the file's client.moduleLoads '${file}'` : ''}` };
  }
  return { perProcess: file === 'per-process', said: file !== undefined, overridden: false, by: `the file's client.moduleLoads` };
}

/** Why a file that says per-process module loads cannot be replayed with a module that is not an app, in one line. */
function notAnApp(file: string, s: Scenario, modulePath: string): string | undefined {
  if (s.service.moduleLoads !== 'per-process') return undefined; // the environment asked, not the file: a service loads once, as always
  return `${file} says service.moduleLoads 'per-process', which is how a hosted app's modules load (--app); ${modulePath} is a service definition, whose per-process state is memory(): drop the field, or replay the app it was found against`;
}

/**
 * Why a module a scenario file names may not be imported, or undefined when
 * it may: the user named it on the command line (`--service`/`--client`),
 * or it lies inside the current directory tree (symbolic links resolved).
 * A scenario file is shared like data; importing a module runs its code, so
 * a file must not pick code from elsewhere on the machine by itself. The
 * answer is one line with the command that runs it knowingly.
 */
export function untrustedModule(file: string, kind: ModuleKind, flag: string | undefined, fromFile: string | undefined, otherFlag: string | undefined, otherFromFile: string | undefined, otherKind: ModuleKind = 'service'): string | undefined {
  if (flag !== undefined || fromFile === undefined) return undefined;
  if (insideCwd(fromFile)) return undefined;
  const otherAs = kind === 'client' ? kindFlag(otherKind) : '--client';
  const other = otherFlag !== undefined ? ` ${otherAs} ${otherFlag}`
    : otherFromFile !== undefined && !insideCwd(otherFromFile) ? ` ${otherAs} ${otherFromFile}` : '';
  return `${file} names ${kindWords(kind)} '${fromFile}', outside this directory; a scenario file does not choose code to run — if you trust it, name it yourself: retrysim replay ${kindFlag(kind)} ${fromFile}${other} ${file}`;
}

/**
 * What a file's user module is, as far as the file can tell before the
 * module is loaded: a client, or the service side — `app` or `service` when
 * the campaign that wrote the file said which flag it ran with (its
 * description names `--app PATH` or `--service PATH`), else `module` (a
 * hand-written file: wording true of both).
 */
export type ModuleKind = 'client' | 'service' | 'app' | 'module';

/** The service side's {@link ModuleKind}, from the command the file's description says found it. */
export function serviceKind(s: Scenario): ModuleKind {
  if (s.service.module === undefined) return 'service';
  // The module's path is not matched: a file whose module was moved was still found against an app (or a service).
  const flag = /\bretrysim (?:check|replay) (--app|--service) /.exec(s.description ?? '')?.[1];
  return flag === '--app' ? 'app' : flag === '--service' ? 'service' : 'module';
}

/** "app module", "service module", "client module" — or "module" when the file cannot tell. */
function kindWords(kind: ModuleKind): string {
  return kind === 'module' ? 'module' : `${kind} module`;
}

/** The flag that names a module of this kind (`--service` runs an app too). */
function kindFlag(kind: ModuleKind): string {
  return kind === 'client' ? '--client' : kind === 'app' ? '--app' : '--service';
}

/**
 * Why a module the file names (and the command line does not) cannot be
 * found, or undefined. A file names its module as its campaign was given it,
 * relative to the directory the campaign ran in; replayed from elsewhere,
 * "no such file /elsewhere/…" reads as if the file were broken.
 */
function missingModule(file: string, kind: ModuleKind, flag: string | undefined, fromFile: string | undefined): string | undefined {
  if (flag !== undefined || fromFile === undefined) return undefined;
  const abs = resolve(fromFile);
  if (existsSync(abs)) return undefined;
  const how = kind === 'module' ? `--service PATH ${file} (--app PATH for an app)` : `${kindFlag(kind)} PATH ${file}`;
  // Two causes read alike: the file was carried out of its campaign's directory, or the module was renamed,
  // moved or misspelled in the file ("replay from there" alone pointed a misspelling the wrong way).
  return `${file} names its ${kindWords(kind)} '${fromFile}', which is not in this directory (${abs}): a file names its module relative to the directory its campaign ran in; replay from there, or, if the module moved, was renamed or is misspelled in the file, name it: retrysim replay ${how}`;
}

function insideCwd(module: string): boolean {
  const cwd = realOr(process.cwd());
  const abs = realOr(resolve(module));
  const r = relative(cwd, abs);
  return r === '' || (r !== '..' && !r.startsWith(`..${sep}`) && !isAbsolute(r));
}

/** The real path (symbolic links resolved), or the path itself when it does not exist (loading then says so). */
function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * The exit code of a replay that threw, after saying why; undefined for an
 * error that is not a verdict (a bug: the caller rethrows it). A user's
 * broken module is 2; a divergence from the recorded schedule is 3 (the
 * timeline up to it with --trace); a valid file whose run cannot finish is
 * 1 (its times or attempts add up past the kernel's limits).
 */
/** What a user who fixed their module and replayed its counterexample needs to hear: strict replay cannot judge the fix; check can. */
const FIX_HINT = ' — a fixed module takes other steps, so a strict replay cannot say whether the fix works: run check on it again';

function replayFailed(e: unknown, file: string, scenario: Scenario, o: { json: boolean; trace: boolean; command: string; other: string }): number | undefined {
  if (e instanceof ServiceError || e instanceof ClientError) {
    // A run the service stopped (a request never answered, a limit): what led there, as for a divergence.
    if (o.trace && !o.json && e.trace !== undefined) {
      console.log(`${o.command}\n\ntimeline up to the stop:`);
      for (const l of readableTimeline(e.trace)) console.log('  ' + l);
      console.log('');
    }
    console.error(`retrysim replay: ${e.message}`);
    const page = stoppedPages.get(e);
    if (page !== undefined) console.error(`wrote ${page} (the run up to the stop)`);
    return 2;
  }
  if (e instanceof ReplayDivergenceError) {
    if (o.json) {
      console.log(JSON.stringify({ file, name: scenario.name, seed: scenario.seed, diverged: e.toJSON() }));
      return 3;
    }
    if (o.trace) {
      console.log(`${o.command}\n\ntimeline up to the divergence:`);
      for (const l of readableTimeline(e.trace)) console.log('  ' + l);
      console.log('');
    }
    console.error(`retrysim replay: ${file}: ${e.message}${o.other}`);
    return 3;
  }
  if (e instanceof SimLimitError || e instanceof DeadlockError) {
    const why = e instanceof SimLimitError
      ? `the run did not finish: it reached the simulation limit ${e.limit}=${e.value} at t=${e.timeMs.toFixed(0)} ms ` +
        `(durations, attempts and resubmits add up to more than the kernel runs; shorten them)`
      : `the run did not finish: ${e.message}`;
    if (o.json) console.log(JSON.stringify({ file, name: scenario.name, seed: scenario.seed, finished: false, error: why, expectMet: false }));
    else console.error(`retrysim replay: ${file}: ${why}`);
    return 1;
  }
  return undefined;
}

/**
 * Replays a file found for a user's retry client: the client (from
 * `--client` or the file's `client.module`, picked by `client.name`) runs on
 * virtual time against the file's service with the recorded schedule,
 * strictly; exit codes as for any replay.
 */
async function replayClient(file: string, scenario: Scenario, clientFlag: string | undefined, servicePath: string | undefined, o: { trace: boolean; json: boolean; html?: string }): Promise<number> {
  const module = clientFlag ?? scenario.client.module;
  if (scenario.client.name === undefined) {
    console.error(`retrysim replay: ${file} runs the built-in harness, not a retry client (no client.name); drop --client`);
    return 2;
  }
  if (module === undefined) {
    console.error(`retrysim replay: ${file} was found for retry client '${scenario.client.name}' and does not name its module; pass --client PATH`);
    return 2;
  }
  // The client module decides its own deadline (RetryClient.deadlineMs): a file that sets one was edited to ask for
  // a verdict nothing judges against (it was accepted, and a deadline 'expected' read as fixed; until 2026-12).
  if (scenario.client.deadlineMs !== undefined) {
    console.error(`retrysim replay: ${file}: client.deadlineMs (${scenario.client.deadlineMs} ms) is not used in a retry client's file — the client's own deadlineMs (its module's) is what deadline judges; remove it, or change the client`);
    return 2;
  }
  let r: ClientRun;
  let service: ServiceDefinition | undefined;
  // A file found with one load of the client's module per simulated client process says so and replays only so.
  const loads = clientModuleLoads(scenario);
  const perProcess = loads.perProcess;
  // The variable overriding the file is part of what ran: the printed line carries it, so it reproduces this run.
  const env = loads.overridden ? `${PER_PROCESS_ENV}=${perProcess ? 1 : 0} ` : '';
  let command = env + replayCommand(file, { client: module });
  try {
    // On the file's client epoch, its top level too; a file without one loads it as it was found, on the machine's clock.
    const client = await loadClient(module, scenario.client.name, scenario.client.epochMs !== undefined ? { epochMs: scenario.client.epochMs } : {});
    service = servicePath !== undefined ? await loadService(servicePath, { perProcess: moduleLoads(scenario).perProcess }) : undefined;
    command = env + replayCommand(file, { client: module, ...(service ? { service } : {}), ...(servicePath !== undefined ? { servicePath } : {}) });
    const opts = { strictReplay: true, keepTrace: o.trace, replayHint: command, ...(service ? { service } : {}), ...(perProcess ? { perProcess: freshClientLoader(module, client.name) } : {}) };
    // With --html the one run is observed: the page and this output describe the same run,
    // and the page's reproduce line is this very command, as for a service's file.
    r = o.html === undefined ? await runClientScenario(scenario, client, opts)
      : await writeClientStepperPage(o.html, scenario, client, { file, replay: `${command} --trace` }, opts);
  } catch (e) {
    const code = replayFailed(e, file, scenario, { ...o, command, other: '' });
    if (code === undefined) throw e;
    return code;
  }
  const m = matchesExpect(scenario, r, service ? service.effects.noun ?? 'effect' : 'report');
  if (o.html !== undefined) console.error(`wrote ${o.html}`);
  if (o.json) {
    console.log(JSON.stringify({ file, name: scenario.name, seed: scenario.seed, client: scenario.client.name, ...(loads.said ? { moduleLoads: perProcess ? 'per-process' : 'once' } : {}), reports: r.reports, violations: r.violations, traceHash: r.result.traceHash, sentHash: sentDigest(r), expectMet: m.ok, problems: m.problems }));
    return m.ok ? 0 : 1;
  }
  console.log(command);
  console.log(`scenario: ${scenario.name} — run seed ${scenario.seed}, retry client '${scenario.client.name}' (${module}) against ${scenario.service.module ?? scenario.service.variant}`);
  if (scenario.description) console.log(`  ${scenario.description}`);
  if (loads.said) console.log(`module loads: ${perProcess ? 'one per simulated client process (what the client keeps at module level is each call\'s own)' : 'once for the run (shared by every simulated client call)'} — ${loads.by}`);
  for (const l of setupLines(scenario)) console.log(l);
  if (o.trace) {
    console.log('\ntimeline:');
    for (const l of readableTimeline(r.trace)) console.log('  ' + l);
  }
  console.log('\nrequests:');
  for (const w of r.workers) {
    // In time order: a request the client's code sent after its call settled (a fire-and-forget one) comes after the settle.
    const settled = `  ${w.name}  ${w.outcome}${w.error ? `: ${w.error}` : ''} at t=${w.endMs.toFixed(1)} ms`;
    let said = false;
    for (const q of w.sent) {
      const after = w.outcome !== 'stopped' && q.atMs > w.endMs;
      if (after && !said) {
        console.log(settled);
        said = true;
      }
      console.log(`  ${w.name}  t=${q.atMs.toFixed(1)} ms  ${q.method} ${q.path}  key=${q.key ?? '-'}  → ${q.outcome ?? 'no answer'}${q.retryAfter !== undefined ? ` (Retry-After: ${q.retryAfter})` : ''}${after ? '  (sent after the call settled)' : ''}`);
    }
    if (!said) console.log(settled);
  }
  // In the service's own word (its effects.noun); the built-in tracker files reports.
  console.log(`\n${service ? plural(service.effects.noun ?? 'effect') : 'reports'} held: ${Object.entries(r.reports).map(([k, v]) => `${k}=${v}`).join(', ')}`);
  console.log(r.violations.length === 0 ? 'invariants: all hold' : 'violations:\n' + r.violations.map((v) => `  ${v.invariant} (${v.op}): ${v.detail}`).join('\n'));
  console.log(scheduleLine(r.result.choices, r.result.traceHash));
  console.log(m.ok ? 'expect: met' : ['expect: NOT met', ...m.problems, ...fixedHint(scenario, r.violations, module)].join('\n  '));
  return m.ok ? 0 : 1;
}

/**
 * The line under an unmet `expect` whose recorded violations no longer
 * happen, for a file about a user's module: most often that module was fixed
 * in place and took the same steps, so the schedule still fits and the run
 * simply no longer fails. "expect: NOT met" alone read as the fix having
 * failed; one case passing says nothing of the others.
 */
function fixedHint(scenario: Scenario, violations: readonly { invariant: string }[], module: string | undefined): string[] {
  if (module === undefined) return [];
  const got = new Set(violations.map((v) => v.invariant));
  const gone = [...new Set(scenario.expect.violations)].filter((v) => !got.has(v));
  if (gone.length === 0) return [];
  return [`it no longer breaks ${gone.join(', ')} here: if ${module} is a fix, it holds on this one case; run check on it again to know whether it holds on the others`];
}

/**
 * The run's schedule in the words and counts `check --json`'s `shrunkSize`
 * uses for the same file (scenarioSize): every decision the kernel made,
 * how many of them did not take the default (the running task going on),
 * and the preemptions among those.
 */
export function scheduleLine(choices: readonly { chosen: number; preempted: boolean }[], traceHash: string): string {
  const n = choices.length;
  const nonDefault = choices.filter((c) => c.chosen !== 0).length;
  const preemptions = choices.filter((c) => c.preempted).length;
  return `schedule: ${n} decision${n === 1 ? '' : 's'}${n > 0 ? ` (${nonDefault} not the default)` : ''}, ${preemptions} preemption${preemptions === 1 ? '' : 's'}; trace ${traceHash}`;
}

/**
 * `--html DIR/` or an existing folder: the page goes inside it, named after
 * the scenario file (`found/x-exactly-one-1a2b.json` → `DIR/x-exactly-one-1a2b.html`),
 * as `check --html DIR` names its pages; until 2026-12 replay refused a
 * folder (`cannot be written (EISDIR)`) where check takes one.
 */
function pageInFolder(out: string, file: string): { path: string; newFolder: boolean } {
  const exists = existsSync(out);
  const folder = /[\\/]$/.test(out) || (exists && statSync(out).isDirectory());
  if (!folder) return { path: out, newFolder: false };
  // A folder not there yet is made when the page is written, after the run: bad input writes nothing.
  return { path: join(out, `${basename(file, extname(file))}.html`), newFolder: !exists };
}
