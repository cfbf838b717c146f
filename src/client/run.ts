import { createHash } from 'node:crypto';
import { Kernel, type RunResult } from '../sim/kernel.js';
import { Trace } from '../sim/trace.js';
import { RandomChoice } from '../sim/choice/random.js';
import { ReplayChoice, ReplayDivergenceError } from '../sim/choice/replay.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { SimNetwork, SimServer } from '../net/sim-network.js';
import type { AttemptRecord, Endpoint, HarnessResult } from '../harness/client.js';
import type { OperationEnd, Violation } from '../checkers/invariants.js';
import type { Scenario } from '../scenario/schema.js';
import { serviceOf } from '../scenario/service-of.js';
import type { ServiceDefinition } from '../service/definition.js';
import { releaseDatabase, simDatabase } from '../service/db.js';
import { checkServiceInvariants } from '../service/check.js';
import { endpointOf, hostInstances } from '../service/run.js';
import { onKernelClock, stuckRequest } from '../service/host.js';
import { ClientStuckError, releaseBridge, runClientsOnVirtualTime } from './bridge.js';
import { ClientError } from './load.js';
import { ServiceError } from '../service/errors.js';
import { SimLimitError } from '../sim/errors.js';
import { SIM_ORIGIN, simFetch, type SentRequest } from './sim-fetch.js';
import { ObservedTrace, observedTransport, type RunObserver } from '../scenario/observe.js';
import { noteRunEnd, type Reached } from '../service/reached.js';
import { noteClientRun } from './coverage.js';
import { clientCheckViolations, isAttemptOf, receivedRefusals, reportsFailure, resolvedWithoutEffect } from './checks.js';
// The client checks live in checks.ts; importers of run.ts keep finding them here.
export { BACKOFF_MIN_RETRIES, clientCheckViolations, isAttemptOf, NON_RETRYABLE_STATUSES, receivedRefusals, reportsFailure, resolvedWithoutEffect, RETRYABLE_STATUSES } from './checks.js';

/** One logical operation, as a user's client is asked to perform it. */
export interface ClientOperation {
  /** The operation's identity (an order id); the same for every worker of the operation. */
  id: string;
  /** Where to send it: the service's operation path (this operation's, when the path names its resource) on the simulated host. */
  url: string;
  method: string;
  /** The request body (the service definition's `operation.body`). */
  body: string;
  /** Headers the operation needs besides the key (`content-type`, the service's `operation.headers` such as credentials, `x-tenant`). */
  headers: Record<string, string>;
}

/**
 * A user's own retrying client, as retrysim runs it: `run` performs one
 * logical operation with the `fetch` it is given and ordinary timers
 * (setTimeout, AbortSignal.timeout) and resolves — or rejects — when it is
 * done or gives up. It is told nothing about faults or virtual time.
 *
 * @example
 * export default {
 *   name: 'my-client',
 *   deadlineMs: 10_000,
 *   async run(fetch, op) {
 *     const key = crypto.randomUUID();
 *     const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(2000) });
 *     return res.status;
 *   },
 * } satisfies RetryClient;
 */
export interface RetryClient {
  name: string;
  /** The client stops (its promise settles, and it sends nothing more) within this many ms of starting one operation. */
  deadlineMs: number;
  run(fetch: typeof globalThis.fetch, op: ClientOperation): Promise<unknown>;
}

/** What a client run produced. */
export interface ClientRun {
  /** Effects per operation id. */
  reports: Record<string, number>;
  violations: Violation[];
  /** Per worker (`op1.w0`): the requests it sent, and how its run settled. */
  workers: Array<{ name: string; operation: string; tenant?: string; startMs: number; endMs: number; sent: SentRequest[]; outcome: 'resolved' | 'rejected' | 'stopped'; error?: string; reportedFailure?: true }>;
  result: RunResult;
  trace: string[];
}

/** Options of {@link runClientScenario}. */
export interface ClientRunOptions {
  choices?: ChoiceSource;
  keepTrace?: boolean;
  /** The service, when the scenario names a module (default: the one loaded from it). */
  service?: ServiceDefinition;
  /**
   * Replay the scenario's recorded schedule strictly (as `retrysim replay`
   * does): a decision that differs from the file, or a recorded one never
   * reached, is a {@link ReplayDivergenceError}.
   */
  strictReplay?: boolean;
  /** The command that reproduces this run, for limit and divergence messages. */
  replayHint?: string;
  /**
   * Watch the run step by step (the HTML stepper): every trace entry with
   * the database, every request as the client's fetch puts it on the wire.
   * The same entries as an unobserved run, so the trace hash is the same.
   */
  observe?: RunObserver;
  /** Counts what the run reached, the client's side and the service's (a campaign's coverage). */
  reached?: Reached;
  /**
   * One simulated client process per worker: each worker (one call of
   * `client.run`) runs the client from a fresh copy of its module, given by
   * this loader (freshClientLoader, src/client/load.ts), as separate client processes —
   * or one restarted between two calls — each load it. Without it every
   * worker of every run calls the one `client`, whose module-level state
   * (a counter, a breaker) they all share: a key from a counter never
   * repeats there, where two real processes both send `order-1`.
   */
  perProcess?: () => Promise<RetryClient>;
}

/**
 * Runs a user's retry client against a scenario's service on the simulated
 * network, on virtual time: every worker of every operation runs
 * `client.run` with a `fetch` whose requests meet the scenario's faults
 * (lost answers after commit or on the way back, crashes, slow and paused
 * requests, kill/restart, two instances, the scheduler's interleavings).
 * Judged: `stable-key` — one call of the client never sends two different
 * Idempotency-Keys for its operation; `deadline` — it settles, and sends
 * nothing, later than `deadlineMs` after it started; `retry-after` — after
 * an answer with `Retry-After: N` it waits N s before sending again (the
 * throttle fault, `network.throttle`, sends 429s with it); `non-retryable` —
 * after an answer that says retrying cannot help (400, 401, 403, 404, 422;
 * the `network.answer` fault sends them) it does not send the operation
 * again; `backoff` — it does not retry (3 times or more) only ever at the
 * instant a retryable answer, a failed connection or a timeout reached it; and the service's
 * effects: `exactly-one` per operation, `id-exists` for every acknowledged id.
 */
/**
 * Each operation's own requests: its method to its path (a service's path
 * may name the operation's resource, `/orders/<runId>`), any query string
 * aside. Another operation's requests are not its attempts.
 */
export function attemptsByOperation(endpoint: Endpoint, operations: Scenario['operations']): Map<string, (r: SentRequest) => boolean> {
  return new Map(operations.map((op) => [op.id, isAttemptOf({ method: endpoint.method, path: endpoint.path({ runId: op.runId, module: op.module, title: op.title, steps: op.steps, tenant: op.tenant ?? 'default' }) })]));
}

export async function runClientScenario(s: Scenario, client: RetryClient, opts: ClientRunOptions = {}): Promise<ClientRun> {
  const def = serviceOf(s, opts.service);
  const endpoint = endpointOf(def);
  const sdb = simDatabase(def);
  try {
    const choices = opts.choices ?? (opts.strictReplay ? new ReplayChoice(s.schedule) : new RandomChoice(s.seed));
    // Every call is let go 1 ms past its deadline, so the run's time limit is an hour past the last of those
    // (the service's deferred work may still run): a fixed hour refused a correct client patient for longer
    // (a webhook sender's backoff in minutes) as one that "never stops retrying".
    const lastStopMs = Math.max(0, ...s.operations.map((op) => op.startMs + (op.workers - 1) * op.staggerMs)) + client.deadlineMs + 1;
    const kernel = new Kernel({ seed: s.seed, choices, trace: opts.observe !== undefined ? new ObservedTrace(opts.keepTrace ?? false, opts.observe, sdb.db) : new Trace(opts.keepTrace ?? false), eventsMax: 200_000, timeMsMax: lastStopMs + 3_600_000, replayHint: opts.replayHint ?? `client '${client.name}' (scenario '${s.name}', seed ${s.seed})` });
    const hosts = hostInstances(s, def, sdb, opts.reached);
    // The service's handlers run on the kernel's clock, on the service's epoch; the client's code on the bridge's,
    // on the client's (client.epochMs: its per-process module loads, at t = 0, read it too).
    const clock = onKernelClock(kernel, hosts, s.service.epochMs ?? 0);
    const net = new SimNetwork(kernel, hosts.map((h, i) => new SimServer(i, h)), kernel.fork('net'), s.network, s.faults.kill);
    const workers: ClientRun['workers'] = [];
    // Each call's simulated fetch, also reached through the global fetch from that call's code (for the service's origin).
    const fetches: Array<typeof globalThis.fetch> = [];
    // Fresh copies load one after another, in worker order, while the bridge holds the kernel (no virtual time
    // passes): a copy's top level draws from the run's seeded stream in an order fixed by the run, not by I/O.
    let loading: Promise<unknown> = Promise.resolve();
    /** A fresh copy that did not load: not a verdict on the client (exit 2, its one line). */
    let loadError: unknown;
    const starts = s.operations.flatMap((op) => Array.from({ length: op.workers }, (_, w) => {
      const name = `${op.id}.w${w}`;
      const tenant = op.tenant ?? 'default';
      const intent = { runId: op.runId, module: op.module, title: op.title, steps: op.steps, tenant };
      const operation: ClientOperation = {
        id: op.runId,
        url: `${SIM_ORIGIN}${endpoint.path(intent)}`,
        method: endpoint.method,
        body: endpoint.body(intent),
        headers: { 'content-type': 'application/json', ...endpoint.headers?.(intent), ...(op.tenant ? { 'x-tenant': op.tenant } : {}) },
      };
      const record: ClientRun['workers'][number] = { name, operation: op.id, tenant, startMs: op.startMs + w * op.staggerMs, endMs: 0, sent: [], outcome: 'resolved' };
      workers.push(record);
      const at = workers.length - 1;
      return async (bridge: Parameters<Parameters<typeof runClientsOnVirtualTime>[2][number]>[0]) => {
        let own = client;
        if (opts.perProcess !== undefined) {
          // This worker's process boots with the run (t = 0): its module is loaded before any worker's code runs.
          const load = loading.then(opts.perProcess);
          loading = load.catch(() => undefined);
          bridge.hold(load);
          try {
            own = await load;
          } catch (e) {
            loadError ??= e;
            record.outcome = 'stopped'; // it never ran: nothing of it is judged
            return;
          }
        }
        if (record.startMs > 0) await new Promise((r) => setTimeout(r, record.startMs)); // real-time: allowed (the bridge's fake clock)
        const wire = net.transport(name);
        const sim = simFetch(kernel, opts.observe !== undefined ? observedTransport(wire, name, opts.observe) : wire, bridge, name, record.sent);
        // A call the bridge stopped past its deadline sends nothing more: its fetch never answers (its code halts there).
        const fetch: typeof globalThis.fetch = (input, init) => (record.outcome === 'stopped' ? new Promise<Response>(() => {}) : sim(input, init));
        fetches[at] = fetch;
        let outcome: 'resolved' | 'rejected' = 'resolved';
        let error: string | undefined;
        let reportedFailure = false;
        try {
          const value = await own.run(fetch, operation);
          reportedFailure = reportsFailure(value, receivedRefusals(record.sent));
        } catch (e) {
          outcome = 'rejected';
          error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        }
        if (record.outcome === 'stopped') return; // it settled after it was let go: the stop is what happened
        record.outcome = outcome;
        if (error !== undefined) record.error = error;
        if (reportedFailure) record.reportedFailure = true;
        record.endMs = kernel.now;
      };
    }));
    // A call still running 1 ms past its deadline has broken it whatever it does next; it is let go there, so a
    // client that never stops retrying fails on `deadline` (it ran the simulation into its limits: exit 2, no file).
    const stopAtMs = workers.map((w) => w.startMs + client.deadlineMs + 1);
    const onStop = (i: number, atMs: number) => {
      const w = workers[i]!;
      w.outcome = 'stopped';
      w.endMs = atMs;
    };
    let globalFetch: string | undefined;
    const onGlobalFetch = (call: string) => (globalFetch ??= call);
    let nodeHttp: string | undefined;
    const onNodeHttp = (call: string) => (nodeHttp ??= call);
    let realFetch: string | undefined;
    const onRealFetch = (call: string) => (realFetch ??= call);
    let socket: string | undefined;
    const onSocket = (call: string) => (socket ??= call);
    /** Not a verdict on the client: what it sent through undici was never simulated (nor judged). */
    const realFetchError = () => new ClientError(client.name, socket === undefined
      ? `it sent ${realFetch} through undici — the undici package's fetch or request, or Node's own fetch held from before retrysim was loaded — which the simulation does not carry: only the fetch run(fetch, op) is handed, or the global fetch, reaches the simulated service (in a vitest file, import retrysim/vitest before the client's module)`
      : `it sent ${realFetch} through undici with a dispatcher of its own (dispatcher: new Agent(), a Pool or a Client), whose socket to ${socket} was refused before any DNS query: the simulation does not carry it; only the fetch run(fetch, op) is handed, or the global fetch, reaches the simulated service (drop the dispatcher option during checks, or pass the fetch as a parameter)`);
    /** Not a verdict on the client: a socket it opened itself was never simulated (nor judged). */
    const socketError = () => new ClientError(client.name, `it opened a socket to ${socket} (net.connect or tls.connect: a client library on raw sockets), refused before any DNS query: the simulation does not carry it; only fetch reaches the simulated service (the fetch run(fetch, op) is handed or the global one)`);
    /** Not a verdict on the client: what it sent through node:http was never simulated (nor judged). */
    const nodeHttpError = () => new ClientError(client.name, `it sent ${nodeHttp} through Node's http module (axios's default adapter in Node, got, node-fetch), which the simulation does not carry: only fetch reaches the simulated service (the fetch run(fetch, op) is handed or the global one; axios: adapter: 'fetch')`);
    const routeGlobalFetch = (i: number, url: string) => (url.startsWith(`${SIM_ORIGIN}/`) ? fetches[i] : undefined);
    kernel.spawn('clients', () => runClientsOnVirtualTime(kernel, kernel.fork('client/random'), starts, undefined, { stopAtMs, onStop, onGlobalFetch, onNodeHttp, onRealFetch, onSocket, routeGlobalFetch, epochMs: s.client.epochMs ?? 0, afterSettledUntilMs: Math.max(...stopAtMs) }));
    let result: RunResult;
    try {
      result = await clock.watch(kernel.run(), (scope) => stuckRequest(def.name, scope, kernel), true);
      if (loadError !== undefined) throw loadError instanceof ClientError ? loadError : new ClientError(client.name, `cannot load afresh for a simulated client process: ${String(loadError)}`);
      if (nodeHttp !== undefined) throw nodeHttpError();
      if (realFetch !== undefined) throw realFetchError();
      if (socket !== undefined) throw socketError();
      // Not a verdict on the client: what it sent that way was never simulated (nor judged).
      if (globalFetch !== undefined) throw new ClientError(client.name, `it called the global fetch (${globalFetch}), which would leave the simulation: only requests under op.url's origin (${SIM_ORIGIN}) reach the simulated service`);
      if (choices instanceof ReplayChoice) choices.finish(result.choices);
    } catch (e) {
      // The run up to the divergence is what a reader needs to see why.
      if (e instanceof ReplayDivergenceError && opts.keepTrace) e.trace = kernel.trace!.lines();
      // The client's code, not retrysim, is what cannot finish: say so in one line (a refused node:http request first: it is why).
      if (nodeHttp !== undefined && (e instanceof ClientStuckError || e instanceof SimLimitError)) throw nodeHttpError();
      if (realFetch !== undefined && (e instanceof ClientStuckError || e instanceof SimLimitError)) throw realFetchError();
      if (socket !== undefined && (e instanceof ClientStuckError || e instanceof SimLimitError)) throw socketError();
      let stop = e;
      if (e instanceof ClientStuckError) stop = new ClientError(client.name, e.message);
      if (e instanceof SimLimitError) stop = new ClientError(client.name, `the run never ends (limit ${e.limit}=${e.value} reached at t=${e.timeMs.toFixed(0)} ms): a client that keeps re-arming timers, or one that never stops retrying`);
      if (stop !== e) (stop as ClientError).ofTheRun = true;
      // What led to a stop of the run's own course is what its reader needs (replay --trace prints it).
      if ((stop instanceof ClientError || stop instanceof ServiceError) && stop.ofTheRun && opts.keepTrace && stop.trace === undefined) stop.trace = kernel.trace!.lines();
      throw stop;
    } finally {
      // A run stopped on a limit leaves the bridge parked with the fakes installed.
      releaseBridge();
      clock.release();
    }
    opts.observe?.end?.(sdb.db);
    if (opts.reached !== undefined) {
      noteRunEnd(opts.reached, {
        // The run's span is the client's: until its last call settled (timers left behind may run the kernel on past it).
        steps: def.steps, choices: result.choices, timeMs: Math.max(0, ...workers.map((w) => w.endMs)),
        killed: net.servers.some((x) => x.kills > x.crashed), ...(s.faults.kill?.atStep !== undefined ? { killAtStep: s.faults.kill.atStep, killNth: s.faults.kill.nth } : {}), killAtAnswer: s.faults.kill?.atAnswer !== undefined,
        answersLost: net.answersLost,
        clockOffsetsMs: s.service.clockOffsetMs.slice(0, s.service.instances),
        recovery: [],
      });
      noteClientRun(opts.reached, workers, s.operations);
    }
    const attemptsOf = attemptsByOperation(endpoint, s.operations);
    const ends: OperationEnd[] = s.operations.map((op) => {
      const isAttempt = attemptsOf.get(op.id)!;
      const mine = workers.filter((w) => w.operation === op.id);
      const attempts: AttemptRecord[] = [];
      const results: HarnessResult[] = [];
      for (const w of mine) {
        w.sent.forEach((r, i) => {
          if (isAttempt(r)) attempts.push(attemptOf(w.name, i + 1, r, endpoint.resultId));
        });
        const ok = attempts.filter((a) => a.toolUseId === w.name && a.reportId !== undefined).pop();
        results.push(ok ? { kind: 'success', reportId: ok.reportId!, replay: ok.replay, attempts: w.sent.length } : { kind: 'unknown', error: w.error ?? 'no success', attempts: w.sent.length });
      }
      return { id: op.id, runId: op.runId, tenant: op.tenant ?? 'default', keySource: 'tool_call', attempts, results };
    });
    const verdict = checkServiceInvariants(def, sdb.db, ends);
    const told = workers.flatMap((w) => resolvedWithoutEffect(w, verdict.reports[w.operation] ?? 0, def.effects.noun ?? 'effect', attemptsOf.get(w.operation)!) ?? []);
    const violations = [...verdict.violations, ...told, ...clientCheckViolations(workers, client.deadlineMs, s.client.epochMs ?? 0)];
    return { reports: verdict.reports, violations, workers, result, trace: opts.keepTrace ? kernel.trace!.lines() : [] };
  } finally {
    releaseDatabase(sdb);
  }
}


function attemptOf(worker: string, n: number, r: SentRequest, resultId: Endpoint['resultId']): AttemptRecord {
  const rec: AttemptRecord = {
    toolUseId: worker, // one call of the client is one operation's key scope
    attempt: n,
    key: r.key,
    title: '',
    startMs: r.atMs,
    // When the answer arrived (invariant 6 orders a key's 2xx answers by it); the send time if none did.
    endMs: r.answeredAtMs ?? r.atMs,
    outcome: typeof r.outcome === 'number' ? { kind: 'http', status: r.outcome } : { kind: 'transport', reason: r.outcome === 'connection_refused' ? 'connection_refused' : r.outcome === 'connection_closed' ? 'connection_closed' : 'timeout' },
    replay: false,
  };
  if (typeof r.outcome === 'number' && r.outcome >= 200 && r.outcome < 300 && r.answer !== undefined) {
    const id = resultId(r.answer, r.headers ?? {});
    if (id !== undefined) rec.reportId = id;
    rec.body = r.answer;
  }
  return rec;
}


/**
 * A digest of what a client run did as the client checks see it: per
 * worker, when it started and ended and how it settled, and per request
 * its time, method, path, key, body, outcome and the times it was answered
 * or given up on; then the effects per operation and which checks broke.
 * Other header values and answer bodies are left out on purpose: no check
 * reads them, and a value a module sets once at load (an instance id, a
 * boot id a service answers with) differs between a campaign's process and
 * a fresh one while the run is the same. The trace hash covers them, so
 * `check --client` compares this one when it asks whether a fresh process
 * reproduces the counterexample it found.
 */
export function sentDigest(run: Pick<ClientRun, 'workers' | 'reports' | 'violations'>): string {
  const workers = run.workers.map((w) => [w.name, w.operation, w.tenant ?? null, w.startMs, w.endMs, w.outcome,
    w.sent.map((r) => [r.atMs, r.method, r.path, r.key ?? null, r.body, r.outcome ?? null, r.answeredAtMs ?? null, r.retryAfter ?? null, r.abortedAtMs ?? null])]);
  const broke = run.violations.map((v) => [v.invariant, v.op]);
  return createHash('sha256').update(JSON.stringify([workers, Object.entries(run.reports), broke])).digest('hex');
}
