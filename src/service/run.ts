import { validateHeaderName, validateHeaderValue } from 'node:http';
import { shellArg } from '../report/shell.js';
import { Kernel, type RunResult } from '../sim/kernel.js';
import { Trace } from '../sim/trace.js';
import { ReplayChoice, ReplayDivergenceError } from '../sim/choice/replay.js';
import { RandomChoice } from '../sim/choice/random.js';
import { DeadlockError, SimLimitError } from '../sim/errors.js';
import { SimNetwork, SimServer } from '../net/sim-network.js';
import { planWorkers } from '../scenario/workers.js';
import type { RunOptions, ScenarioRun } from '../scenario/run.js';
import type { Scenario } from '../scenario/schema.js';
import { outcomeUnknownText, type Endpoint, type ReportIntent } from '../harness/client.js';
import type { EffectId, OperationIntent, ServiceDefinition } from './definition.js';
import { isEffectId, valueText } from './ids.js';
import { releaseDatabase, simDatabase, type ServiceDatabase } from './db.js';
import { onKernelClock, ServiceHost, stuckRequest, leftUnsettled } from './host.js';
import { checkRecoveryAnswers, checkServiceInvariants, effectsOf } from './check.js';
import { ObservedTrace, observedTransport } from '../scenario/observe.js';
import { runRecovery, clockSkewMs, recoveryTimeoutMs } from '../scenario/recovery.js';
import { checkProgress } from '../checkers/progress.js';
import type { TrackerRequest } from '../tracker/messages.js';
import type { OperationEnd } from '../checkers/invariants.js';
import { describeThrow, ofTheRun, ServiceError } from './errors.js';
import { registeredService } from './registry.js';
import { noteRunEnd, type Reached } from './reached.js';
import { moduleFlag } from '../app/define.js';

/** The built-in client's way to call a service's operation. */
export function endpointOf(def: ServiceDefinition): Endpoint {
  const op = def.operation;
  const wrap = <P extends unknown[], R>(what: string, f: (...a: P) => R) => (...a: P): R => {
    try {
      return f(...a);
    } catch (e) {
      // Our own refusal of what it returned already names the service and the function.
      if (e instanceof ServiceError) throw e;
      throw new ServiceError(def.name, `operation.${what} threw ${describeThrow(e)}`);
    }
  };
  const path = op.path;
  return {
    method: op.method ?? 'POST',
    path: typeof path === 'string' ? () => path : wrap('path', (i) => {
      const p = path(intentOf(i));
      if (typeof p !== 'string' || !p.startsWith('/')) throw new ServiceError(def.name, `operation.path must return the path of the operation (a string starting with '/'), got ${typeof p === 'string' ? JSON.stringify(p) : typeof p}`);
      return p;
    }),
    body: wrap('body', (i) => {
      const b = op.body(intentOf(i));
      if (typeof b !== 'string') throw new ServiceError(def.name, `operation.body must return the body text (a string), got ${typeof b}`);
      return b;
    }),
    ...(op.headers === undefined ? {} : { headers: wrap('headers', (i: ReportIntent) => checkedHeaders(def.name, 'operation.headers', op.headers!(intentOf(i)))) }),
    resultId: op.resultId === undefined ? defaultResultId : checkedResultId(def.name, wrap('resultId', op.resultId)),
    // In the service's words: its noun and its own progress query, never the built-in tracker's.
    unknownText: wrap('progress.query', (i) => outcomeUnknownText(def.effects.noun ?? 'effect', def.progress?.query({ runId: i.runId, tenant: i.tenant ?? 'default' }).path)),
  };
}

/** Headers the campaign sets itself: a service's own may not replace them. */
const CAMPAIGN_HEADERS = new Set(['idempotency-key', 'x-tenant']);

/**
 * A service's own request headers (operation.headers, progress.query's),
 * checked once where they are made: an object of strings with names HTTP
 * allows, none of the campaign's own. Names come back lower-case, as Node
 * hands them to a handler.
 */
export function checkedHeaders(service: string, what: string, h: unknown): Record<string, string> {
  if (typeof h !== 'object' || h === null || Array.isArray(h)) throw new ServiceError(service, `${what} must return an object of header names to string values, got ${h === null ? 'null' : Array.isArray(h) ? 'an array' : typeof h}`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new ServiceError(service, `${what}: header '${k}' of type ${typeof v} (header values are strings)`);
    // node:http's own rules, as for a service's answers (host.ts): real mode sends these with it.
    try {
      validateHeaderName(k);
    } catch {
      throw new ServiceError(service, `${what}: ${JSON.stringify(k)} is not a header name`);
    }
    try {
      validateHeaderValue(k, v);
    } catch {
      throw new ServiceError(service, `${what}: header '${k}' has a value HTTP cannot carry (a line break, a control character, or a character outside Latin-1)`);
    }
    const name = k.toLowerCase();
    if (CAMPAIGN_HEADERS.has(name)) throw new ServiceError(service, `${what}: '${name}' is the campaign's own header (it sends the key source's key and the operation's tenant); leave it out`);
    out[name] = v;
  }
  return out;
}

/** What a service's operation functions are given: the operation, without the harness's own fields. */
function intentOf(i: ReportIntent): OperationIntent {
  return { runId: i.runId, module: i.module, title: i.title, steps: i.steps, tenant: i.tenant ?? 'default' };
}

/**
 * Default: a JSON body's `id` field when it is a number or a non-empty
 * string. Text ids (`{"id":"3f2a…"}`, a UUID key) are read too: read as
 * "no id", a 201 naming a UUID the service never stored would be judged by
 * nothing, and `id-exists` would hold for want of an id to check.
 */
export function defaultResultId(body: string): EffectId | undefined {
  try {
    const v = JSON.parse(body) as { id?: unknown } | null;
    const id = v?.id;
    return typeof id === 'number' || (typeof id === 'string' && id.length > 0) ? id : undefined;
  } catch {
    return undefined;
  }
}

/** A user's `operation.resultId`, its answer checked: an id the checkers cannot compare is the definition's fault, said in one line. */
function checkedResultId(service: string, f: (...a: Parameters<Endpoint['resultId']>) => unknown): Endpoint['resultId'] {
  return (body, headers) => {
    const id = f(body, headers);
    if (id === undefined || isEffectId(id)) return id;
    throw new ServiceError(service, `operation.resultId must return the acknowledged effect's id (a number or a non-empty string) or undefined when the answer names none, got ${valueText(id)} for the answer ${valueText(body)}${headers !== undefined && Object.keys(headers).length > 0 ? ` with headers ${valueText(headers)}` : ''}`);
  };
}

/** The definition a scenario names: the one given, else the one loaded from its module path. */
export function serviceFor(s: Scenario, given?: ServiceDefinition): ServiceDefinition {
  if (given) return given;
  const def = s.service.module === undefined ? undefined : registeredService(s.service.module);
  if (def === undefined) throw new ServiceError(s.service.module ?? '?', `scenario '${s.name}' runs service module '${s.service.module}', which is not loaded; pass --service ${s.service.module}`);
  return def;
}

/** The scenario's instances of a service on one database, its faults armed. */
export function hostInstances(s: Scenario, def: ServiceDefinition, sdb: ServiceDatabase, reached?: Reached): ServiceHost[] {
  return Array.from({ length: s.service.instances }, (_, i) => new ServiceHost(def, sdb, `s${i}`, {
    // Counters are per instance; the scenario's faults arm instance 0 (the
    // first to be hit under round-robin), so a fault fires once, not once per instance.
    loseResponseAfterCommit: i === 0 ? s.faults.loseResponseAfterCommit : 0,
    crashMidRequest: i === 0 ? s.faults.crashMidRequest : 0,
    crashAt: s.faults.crashAt,
    crashAtNth: s.faults.crashAtNth,
    slowMs: s.faults.slowMs,
    slowAtStep: s.faults.slowAtStep,
    slowAtStepNth: s.faults.slowAtStepNth,
    pause: i === 0 ? s.faults.pause : undefined,
    clockOffsetMs: s.service.clockOffsetMs[i] ?? 0,
  }, reached, true));
}

/**
 * Runs one scenario against a service — a user's, or a built-in tracker
 * variant (src/tracker/service.ts): the kernel, the simulated network, one
 * retrying client task per worker, the service hosted through the service
 * API only, judged by its declared effects; then, when the service opts in
 * (`progress`), the recovery phase of invariant 5. A problem in the service
 * itself (a throw, a request that never answers, an undeclared step or
 * table) is a {@link ServiceError} naming it.
 */
export async function runServiceScenario(s: Scenario, def: ServiceDefinition, opts: RunOptions = {}): Promise<ScenarioRun> {
  const choices = opts.choices ?? (s.schedule.length > 0 || opts.strictReplay ? new ReplayChoice(s.schedule) : new RandomChoice(s.seed));
  const sdb = simDatabase(def);
  const obs = opts.observe;
  try {
    const kernel = new Kernel({
      seed: s.seed,
      choices,
      trace: obs !== undefined ? new ObservedTrace(opts.keepTrace ?? false, obs, sdb.db) : opts.hashTrace === false && !opts.keepTrace ? false : new Trace(opts.keepTrace ?? false),
      eventsMax: 200_000,
      timeMsMax: 3_600_000,
      replayHint: opts.replayHint ?? (s.service.module === undefined ? `retrysim replay <file> (scenario '${s.name}', seed ${s.seed})` : `retrysim replay ${moduleFlag(def)} ${shellArg(s.service.module)} <file> (scenario '${s.name}', seed ${s.seed})`),
    });
    const hosts = hostInstances(s, def, sdb, opts.reached);
    // The handlers' Date, timers and randomness are the kernel's for the run
    // (installed once per run, not per step: the dispatchers only act while a
    // request's code runs), always released — a throw or a limit included.
    const clock = onKernelClock(kernel, hosts, s.service.epochMs ?? 0);
    const net = new SimNetwork(kernel, hosts.map((h, i) => new SimServer(i, h)), kernel.fork('net'), s.network, s.faults.kill);
    const endpoint = endpointOf(def);
    const { ends, workers } = planWorkers(s, endpoint);
    // Each operation's last request, for the recovery phase to resubmit verbatim.
    const lastRequests = new Map<string, TrackerRequest>();
    for (const w of workers) {
      const rng = kernel.fork(w.rngLabel);
      const opId = ends[w.opIndex]!.id;
      const wire = net.transport(w.name);
      const transport = { send: (req: TrackerRequest, timeoutMs: number) => (lastRequests.set(opId, req), wire.send(req, timeoutMs)) };
      // Every client step either sleeps or sends: it touches what a send touches.
      const fp = net.clientFootprint;
      kernel.spawn(w.name, async () => {
        if (w.startMs > 0) await kernel.sleep(w.startMs, fp);
        const res = await w.run(obs === undefined ? transport : observedTransport(transport, w.name, obs), { now: () => kernel.now, sleep: (ms) => kernel.sleep(ms, fp), rng, note: (text) => kernel.note(w.name, text) });
        const f = res.final;
        kernel.log(w.name, `result ${f.kind}`, f.kind === 'success'
          ? { [def.effects.noun === undefined ? 'id' : `${def.effects.noun}Id`]: f.reportId, replay: f.replay, calls: res.toolCalls.length }
          : { error: f.error, calls: res.toolCalls.length });
      }, { footprint: fp });
    }
    let result: RunResult;
    try {
      result = await clock.watch(kernel.run(), (scope) => stuckRequest(def.name, scope, kernel));
      if (choices instanceof ReplayChoice) choices.finish(result.choices);
    } catch (e) {
      // The run up to the divergence is what a reader needs to see why.
      if (e instanceof ReplayDivergenceError && opts.keepTrace) e.trace = kernel.trace!.lines();
      let stop = e;
      if (e instanceof DeadlockError) {
        const requests = e.blocked.map((b) => b.replace(/:[^:/]*$/, ''));
        stop = ofTheRun(new ServiceError(def.name, `never answered request${requests.length === 1 ? '' : 's'} ${requests.join(', ')}: ${leftUnsettled(requests, kernel)}the handler waits on something nothing in the simulation settles (a sim.defer() nobody resolves, a promise of another request that never settles it, real I/O)`));
      }
      // A generated scenario of a prompt service ends well within the
      // kernel's limits; a user's service that does not (a handler awaiting
      // a 5-hour timer, work it schedules for ever) is the service's doing,
      // not "inputs too large": name it and the requests still running.
      if (e instanceof SimLimitError && s.service.module !== undefined) stop = ofTheRun(limitError(def.name, e, kernel));
      // What led to a stop the service caused is what its reader needs (replay --trace prints it).
      if (stop instanceof ServiceError && opts.keepTrace && stop.trace === undefined) stop.trace = kernel.trace!.lines();
      throw stop;
    } finally {
      clock.release();
    }
    obs?.end?.(sdb.db);
    // Invariants 1–4 are judged on the main run's end state, before recovery adds anything.
    const verdict = checkServiceInvariants(def, sdb.db, ends);
    const progress = def.progress;
    const note = (recovery: Iterable<{ kind: string; attempts: number }>) => {
      if (opts.reached === undefined) return;
      noteRunEnd(opts.reached, {
        // The span ends at the run's last event: a request timeout left pending once its answer came would stretch every run to the client's timeout.
        steps: def.steps, choices: result.choices, timeMs: result.lastEventMs,
        killed: net.servers.some((x) => x.kills > x.crashed), ...(s.faults.kill?.atStep !== undefined ? { killAtStep: s.faults.kill.atStep, killNth: s.faults.kill.nth } : {}), killAtAnswer: s.faults.kill?.atAnswer !== undefined,
        answersLost: net.answersLost,
        clockOffsetsMs: s.service.clockOffsetMs.slice(0, s.service.instances),
        recovery,
        ops: ends,
      });
    };
    if (progress === undefined) {
      note([]);
      opts.inspect?.(sdb.db);
      return { reports: verdict.reports, violations: verdict.violations, operations: ends, result, trace: opts.keepTrace ? kernel.trace!.lines() : [], recovery: new Map(), recoveryTrace: [], crashes: net.crashes };
    }
    const rec = await runRecovery({ scenario: s, progress, instances: hosts, mainEndMs: result.timeMs, ends, lastRequests, keepTrace: opts.keepTrace ?? false, mainClock: clock });
    // The effects after recovery, read once per operation for both judgements below.
    const afterRecovery = new Map<string, EffectId[]>();
    const effectsAfter = (op: OperationEnd): EffectId[] => {
      let ids = afterRecovery.get(op.id);
      if (ids === undefined) afterRecovery.set(op.id, (ids = effectsOf(def, sdb.db, op)));
      return ids;
    };
    const stalled = checkProgress(effectsAfter, ends, rec.outcomes, {
      usesLease: progress.leased,
      leaseMs: progress.settleMs,
      clientTimeoutMs: recoveryTimeoutMs(s),
      slowMs: s.faults.slowMs,
      skewMs: clockSkewMs(s),
    }, def.effects.noun ?? 'effect');
    // Before progress: a leak is what a 2xx without an effect of its own most often is.
    const leaked = checkRecoveryAnswers(def, sdb.db, ends, rec.outcomes, endpoint.resultId, effectsAfter);
    note(rec.outcomes.values());
    opts.inspect?.(sdb.db);
    return {
      reports: verdict.reports,
      violations: stalled.length + leaked.length === 0 ? verdict.violations : [...verdict.violations, ...leaked, ...stalled],
      operations: ends,
      result,
      trace: opts.keepTrace ? kernel.trace!.lines() : [],
      recovery: rec.outcomes,
      recoveryTrace: rec.trace,
      crashes: net.crashes,
    };
  } finally {
    releaseDatabase(sdb);
  }
}

/** One line for a user service's run that the kernel's limit stopped: which limit, and which requests had not answered. */
function limitError(service: string, e: SimLimitError, kernel: Kernel): ServiceError {
  const live = kernel.liveTaskNames();
  const requests = live.filter((n) => n.includes('/'));
  const who = requests.length > 0 ? `request${requests.length === 1 ? '' : 's'} ${requests.join(', ')} still unanswered` : `still running: ${live.join(', ') || 'nothing but timers'}`;
  const limit = e.limit === 'timeMsMax' ? `one virtual hour (timeMsMax = ${e.value} ms)` : `${e.value} events (${e.limit})`;
  return new ServiceError(service, `a run did not end within the simulation's limit of ${limit}, at t=${e.timeMs.toFixed(0)} ms, ${who}: a handler waits past it (a timer or sim.sleep of hours) or schedules work for ever (a timer that re-arms itself while requests run)`);
}
