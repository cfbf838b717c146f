import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Prng } from '../random/prng.js';
import { RandomChoice } from '../sim/choice/random.js';
import { exploreAll } from '../sim/explore/exhaustive.js';
import { scenarioSchema, type Scenario } from '../scenario/schema.js';
import type { ServiceDefinition } from '../service/definition.js';
import { registerService } from '../service/registry.js';
import { serviceEpochField } from '../service/epoch.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { endpointOf } from '../service/run.js';
import { serviceOf } from '../scenario/service-of.js';
import type { BuiltinName } from '../tracker/builtin.js';
import { answered2xx } from '../client/checks.js';
import { firstRefusal, preferRefusal, type Refusal } from '../client/coverage.js';
import { clientCheckViolations, isAttemptOf, receivedRefusals, reportsFailure, resolvedWithoutEffect, runClientScenario, type ClientOperation, type ClientRun, type RetryClient } from '../client/run.js';
import type { SentRequest } from '../client/sim-fetch.js';
import { routeFetchDispatcher, unroutedFetch } from '../client/global-fetch.js';
import { ServerProcess } from './child.js';
import { ServiceError } from '../service/errors.js';
import { backgroundOf, runSeed } from './flaky.js';
import { SETTLE_LIMIT_MS, settle } from './scenario-real.js';
import { upperBound } from './stats.js';

/**
 * The flakiness lab for a user's retry client (SPEC §7, `retrysim flaky
 * --client`). One timing-dependent test — the client performs one
 * operation against a server that takes `slowMs + U[0, spreadMs)` ms to
 * process it, so whether the client's own timeout fires first depends on
 * the run — judged by the client's own checks (stable-key, deadline,
 * retry-after, non-retryable, backoff, progress) and exactly-one on the service's
 * effects, run three ways:
 *
 * 1. wall clock: the client's code with real timers and Node's fetch
 *    against a real `retrysim serve` process, N times;
 * 2. virtual time: the same client code on the fake-timers bridge against
 *    the simulated service, the same N processing times;
 * 3. simulation: every interleaving at every processing time on a 1 ms grid,
 *    enumerated — which schedules fail, and on which check.
 */
export interface ClientFlakyOptions {
  client: RetryClient;
  /** The client's module path (named in the report). */
  clientModule: string;
  /** The built-in service it talks to (default key_atomic: a correct endpoint, so what fails is the client). */
  variant?: BuiltinName;
  service?: { def: ServiceDefinition; module: string };
  runs?: number;
  /** The server's least processing time. Default 2 ms. */
  slowMs?: number;
  /** Processing takes slowMs + U[0, spreadMs) ms, drawn per run. Default 40 ms. */
  spreadMs?: number;
  schedulesMax?: number;
  seed?: number;
}

/** One run of the client's test. */
export interface ClientTestRun {
  processingMs: number;
  failed: boolean;
  /** The checks it broke (names as the campaign uses them). */
  checks: string[];
  /** Some request of the run was answered 2xx: without one, the checks it kept say nothing (a client refused throughout sends no duplicate). */
  succeeded: boolean;
  /** Wall clock: the server was still at work (a request, a timer a handler armed) when the settle limit ran out, so the effects were read before it was done. */
  unsettled?: true;
}

/** One side of the comparison. */
export interface ClientApproach {
  runs: number;
  failures: number;
  /** Exact one-sided 95 % upper bound on the failure rate (0 in n: 1 − 0.05^(1/n)). */
  upperBound95: number;
  /** Failing runs per check. */
  byCheck: Record<string, number>;
  /** Runs in which some request was answered 2xx. */
  succeeded: number;
  /** The first request of the side's runs answered without a 2xx, in one line (`op1.w0 PUT /orders/flaky-0 → 401 …`); absent when every request was. */
  firstRefusal?: string;
  /** Runs read with the server still at work after the settle limit (wall clock; 0 elsewhere). */
  unsettled: number;
  wallMs: number;
  perRun: ClientTestRun[];
}

/** What the client lab measured. */
export interface ClientFlakyReport {
  options: { client: string; clientModule: string; service: string; runs: number; slowMs: number; spreadMs: number; schedulesMax: number; seed: number };
  wallClock: ClientApproach;
  virtualTime: ClientApproach & { virtualMs: number };
  /**
   * The lab's verdict: `fails` when a check failed on any side (a wall-clock
   * run, a virtual-time run or a simulated schedule); else `inconclusive`
   * when on some side no request of any run or schedule was answered 2xx (a
   * client refused throughout — a 401, a wrong path — keeps every check
   * vacuously, as `check --client` says); else `holds`. The exit code of
   * `flaky --client`: 1, 4, 0.
   */
  verdict: 'holds' | 'fails' | 'inconclusive';
  /** Why the verdict is inconclusive, in one sentence per side that never succeeded. */
  inconclusive?: string;
  simulated: {
    grid: Array<{ processingMs: number; schedules: number; failing: number; complete: boolean }>;
    schedules: number;
    failing: number;
    complete: boolean;
    /** Schedules in which some request was answered 2xx. */
    succeeded: number;
    firstRefusal?: string;
    /** Failing schedules per check. */
    byCheck: Record<string, number>;
    /** Share of the processing-time grid at which some schedule fails. */
    predictedRate: number;
    wallMs: number;
  };
}

type Resolved = Required<Omit<ClientFlakyOptions, 'service' | 'variant'>> & { variant: BuiltinName; service?: ClientFlakyOptions['service'] };

/** Run i's processing time: slowMs + U[0, spreadMs), from the run's own seed (the same in every approach). */
export function processingOf(o: Pick<Resolved, 'seed' | 'slowMs' | 'spreadMs'>, i: number): number {
  return o.slowMs + Math.floor(new Prng(runSeed(o.seed, i)).uniform(0, o.spreadMs));
}

/** The scenario the simulation and the virtual-time side run: one call of the client, the server taking `processingMs`. */
export function clientLabScenario(o: Resolved, processingMs: number): Scenario {
  return scenarioSchema.parse({
    format: 'retrysim.scenario/2',
    name: `flaky lab · client ${o.client.name} · processing ${processingMs} ms`,
    description: `One call of retry client '${o.client.name}'; the server takes ${processingMs} ms to process each request.`,
    seed: o.seed,
    // A user's service lives in the present, as check --client --service runs it (src/sim/epoch.ts).
    service: o.service ? { module: o.service.module, ...serviceEpochField(o.service.def) } : { variant: o.variant },
    // The client too: its Date reads 2026 on the virtual and simulated lanes, as on the real one's machine.
    client: { keySource: 'tool_call', name: o.client.name, module: o.clientModule, epochMs: SIM_EPOCH_MS },
    faults: { slowMs: processingMs },
    operations: [{ id: 'op1', runId: 'flaky', module: 'checkout', title: 'Pay button does nothing', steps: '1. press Pay' }],
    expect: {},
  });
}

function approach(perRun: ClientTestRun[], wallMs: number, refusal: Refusal | undefined): ClientApproach {
  const failures = perRun.filter((r) => r.failed).length;
  const byCheck: Record<string, number> = {};
  for (const r of perRun) for (const c of r.checks) byCheck[c] = (byCheck[c] ?? 0) + 1;
  return {
    runs: perRun.length, failures, upperBound95: upperBound(failures, perRun.length), byCheck,
    succeeded: perRun.filter((r) => r.succeeded).length, ...(refusal !== undefined ? { firstRefusal: refusal.line } : {}),
    unsettled: perRun.filter((r) => r.unsettled).length, wallMs, perRun,
  };
}

/** Some request of the run's workers was answered 2xx. */
function succeededIn(workers: ClientRun['workers']): boolean {
  return workers.some((w) => w.sent.some(answered2xx));
}

/**
 * Why the lab says nothing although no check failed: the sides on which no
 * request of any run was answered 2xx. Undefined when every side saw one.
 * Exported for its test.
 */
export function vacuousSides(sides: Array<{ side: string; what: string; total: number; succeeded: number; firstRefusal?: string }>): string | undefined {
  const never = sides.filter((x) => x.total > 0 && x.succeeded === 0);
  if (never.length === 0) return undefined;
  const each = never.map((x) => `${x.side} no request of the ${x.total} ${x.what} was answered 2xx${x.firstRefusal === undefined ? '' : ` (the first: ${x.firstRefusal})`}`);
  return `${each.join('; ')} — a client that never succeeds keeps every check vacuously`;
}

function checksOf(run: Pick<ClientRun, 'violations'>): string[] {
  return [...new Set(run.violations.map((v) => v.invariant))].sort();
}

/** The URL a fetch call names (a string, a URL or a Request). */
function urlOf(input: Parameters<typeof fetch>[0]): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/**
 * A `fetch` that records every request as the client run does (send and
 * answer times relative to `t0`), so the same checks judge a wall-clock run.
 * Exported for its test.
 */
export function recordingFetch(inner: typeof globalThis.fetch, base: string, sent: SentRequest[], t0: number): typeof globalThis.fetch {
  return async (input, init = {}) => {
    const atMs = Date.now() - t0;
    // Read as fetch would — method, headers and body from a Request unless init overrides them, a body of
    // bytes as text — and sent to the lab's server: a Request used to go out as a bodiless GET (init alone).
    const request = new Request(input instanceof Request ? input : new URL(input instanceof URL ? input.href : input), init);
    const url = new URL(request.url);
    const sentBody = request.body === null ? '' : await request.clone().text();
    const signal = init.signal ?? (input instanceof Request ? input.signal : undefined);
    // As in a simulated run: a signal already aborted stops fetch before anything is sent, so nothing is recorded.
    if (signal?.aborted) throw signal.reason;
    const rec: SentRequest = { atMs, method: request.method, path: url.pathname + url.search, key: request.headers.get('idempotency-key') ?? undefined, body: sentBody };
    sent.push(rec);
    try {
      const res = await inner(`${base}${url.pathname}${url.search}`, { method: request.method, headers: request.headers, ...(request.body !== null ? { body: sentBody } : {}), ...(signal ? { signal } : {}) });
      const body = await res.clone().text();
      rec.answeredAtMs = Date.now() - t0;
      rec.outcome = res.status;
      rec.answer = body;
      const ra = res.headers.get('retry-after');
      if (ra !== null) rec.retryAfter = ra;
      return res;
    } catch (e) {
      if (signal?.aborted) {
        rec.outcome = 'aborted';
        rec.abortedAtMs = Date.now() - t0;
      } else {
        rec.answeredAtMs = Date.now() - t0;
        rec.outcome = (e as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED' ? 'connection_refused' : 'connection_closed';
      }
      throw e;
    }
  };
}

/** 1. Wall clock: the client's code with real timers and real HTTP against one real server process. */
async function wallClock(o: Resolved): Promise<ClientApproach> {
  const dir = mkdtempSync(join(tmpdir(), 'retrysim-flaky-client-'));
  const dbPath = join(dir, 'service.db');
  const def = serviceOf(clientLabScenario(o, o.slowMs), o.service?.def);
  const endpoint = endpointOf(def);
  const server = new ServerProcess({ ...(o.service ? { module: o.service.module } : { variant: o.variant }), dbPath, slowMs: o.slowMs, admin: true });
  let reader: Database.Database | undefined;
  try {
    const port = await server.start();
    // The server process owns the file; this connection only reads the effects it committed (WAL).
    reader = new Database(dbPath, { readonly: true });
    // Warm up with the operation itself (its own run id, counted nowhere): the first requests of a process
    // (connection setup, compiling the handler's path, the first commit) take tens of ms more than the rest,
    // and the lab measures the client against the processing time, not a cold start.
    const idle = await backgroundOf(port);
    const warmUp = { runId: 'flaky-warmup', module: 'checkout', title: 'warm-up', steps: '-', tenant: 'default' };
    for (let i = 0; i < 3; i++) {
      const res = await globalThis.fetch(`http://127.0.0.1:${port}${endpoint.path(warmUp)}`, {
        method: endpoint.method, headers: { 'content-type': 'application/json', ...endpoint.headers?.(warmUp), 'idempotency-key': `flaky-warmup-${i}` },
        body: endpoint.body(warmUp),
      });
      await res.arrayBuffer();
    }
    // The warm-up's own deferred work (a 202 whose effect a timer writes) finishes before the first run: counted
    // in that run's idle baseline, it let the run be read before its own timer wrote (exactly-one, on a correct service).
    await settle(server, SETTLE_LIMIT_MS, idle);
    const t0 = Date.now();
    const perRun: ClientTestRun[] = [];
    let refusal: Refusal | undefined;
    for (let i = 0; i < o.runs; i++) {
      const processingMs = processingOf(o, i);
      await server.setFaults({ slowMs: processingMs });
      const runId = `flaky-${i}`;
      const intent = { runId, module: 'checkout', title: 'Pay button does nothing', steps: '1. press Pay', tenant: 'default' };
      // As the simulation judges them: a query string on the operation's path is still its attempt.
      const path = endpoint.path(intent);
      const isAttempt = isAttemptOf({ method: endpoint.method, path });
      const op: ClientOperation = {
        id: runId, url: `http://127.0.0.1:${port}${path}`, method: endpoint.method,
        body: endpoint.body(intent),
        headers: { 'content-type': 'application/json', ...endpoint.headers?.(intent) },
      };
      const sent: SentRequest[] = [];
      // What the server had running before this run (an interval an earlier run left) is not this run's to wait for.
      const before = await backgroundOf(port);
      const start = Date.now();
      const w: ClientRun['workers'][number] = { name: 'op1.w0', operation: 'op1', startMs: 0, endMs: 0, sent, outcome: 'resolved' };
      try {
        const base = `http://127.0.0.1:${port}`;
        const recording = recordingFetch(unroutedFetch(), base, sent, start);
        // A client that calls the global fetch (a module-level ky instance, fetch-retry's wrapper taken at load)
        // is recorded too, as in a simulated run: unrecorded, its real requests counted as none (`progress`).
        routeFetchDispatcher((input, init) => (urlOf(input).startsWith(`${base}/`) ? recording(input, init) : unroutedFetch()(input, init)));
        const value = await o.client.run(recording, op);
        if (reportsFailure(value, receivedRefusals(sent))) w.reportedFailure = true;
      } catch (e) {
        w.outcome = 'rejected';
        w.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      } finally {
        routeFetchDispatcher(undefined);
      }
      w.endMs = Date.now() - start;
      // Requests the client abandoned may still be running on the server: let them finish before counting.
      await new Promise((r) => setTimeout(r, processingMs + 20));
      // And the work the service deferred past its answers (a 202 whose effect a timer writes), as the
      // simulation runs such a timer before judging: read at once, a correct one failed exactly-one here.
      const settled = await settle(server, SETTLE_LIMIT_MS, before);
      const checks = new Set(clientCheckViolations([w], o.client.deadlineMs, start).map((v) => v.invariant));
      const keys = new Set(sent.filter(isAttempt).map((q) => q.key));
      if (keys.size > 1) checks.add('stable-key');
      const effects = def.effects.of(reader, { runId, tenant: 'default' }).length;
      const acknowledged = sent.some(answered2xx);
      if (effects > 1 || (acknowledged && effects === 0)) checks.add('exactly-one');
      // A call that resolved with no 2xx and nothing made told its caller something false (as in a simulated run).
      if (resolvedWithoutEffect(w, effects, def.effects.noun ?? 'effect', isAttempt)) checks.add('exactly-one');
      refusal = preferRefusal(refusal, firstRefusal([w]));
      perRun.push({ processingMs, failed: checks.size > 0, checks: [...checks].sort(), succeeded: acknowledged, ...(settled ? {} : { unsettled: true as const }) });
    }
    return approach(perRun, Date.now() - t0, refusal);
  } catch (e) {
    // A server that died under the client's requests (a user's service leaving a rejection unhandled) is named, not a refused port's stack.
    const died = await server.death();
    if (died !== undefined) throw new ServiceError(def.name, `${died}, on the wall clock`);
    throw e;
  } finally {
    reader?.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** 2. The same client code on virtual time (the fake-timers bridge), against the simulated service, the same processing times. */
async function virtualTime(o: Resolved): Promise<ClientApproach & { virtualMs: number }> {
  const t0 = Date.now();
  let virtualMs = 0;
  const perRun: ClientTestRun[] = [];
  let refusal: Refusal | undefined;
  for (let i = 0; i < o.runs; i++) {
    const processingMs = processingOf(o, i);
    const r = await runClientScenario(clientLabScenario(o, processingMs), o.client, { choices: new RandomChoice(runSeed(o.seed, i)), ...(o.service ? { service: o.service.def } : {}) });
    virtualMs += Math.max(0, ...r.workers.map((w) => w.endMs));
    const checks = checksOf(r);
    refusal = preferRefusal(refusal, firstRefusal(r.workers));
    perRun.push({ processingMs, failed: checks.length > 0, checks, succeeded: succeededIn(r.workers) });
  }
  return { ...approach(perRun, Date.now() - t0, refusal), virtualMs };
}

/** 3. Every interleaving at every processing time slowMs + d, d on a 1 ms grid in [0, spreadMs). */
async function simulated(o: Resolved): Promise<ClientFlakyReport['simulated']> {
  const t0 = Date.now();
  const grid: ClientFlakyReport['simulated']['grid'] = [];
  const byCheck: Record<string, number> = {};
  let succeeded = 0;
  let refusal: Refusal | undefined;
  for (let d = 0; d < o.spreadMs; d++) {
    const s = clientLabScenario(o, o.slowMs + d);
    let failing = 0;
    const e = await exploreAll((choices) => runClientScenario(s, o.client, { choices, ...(o.service ? { service: o.service.def } : {}) }), {
      schedulesMax: o.schedulesMax,
      keep: () => false,
      onSchedule: (x) => {
        if (succeededIn(x.result.workers)) succeeded++;
        refusal = preferRefusal(refusal, firstRefusal(x.result.workers));
        const checks = checksOf(x.result);
        if (checks.length === 0) return;
        failing++;
        for (const c of checks) byCheck[c] = (byCheck[c] ?? 0) + 1;
      },
    });
    grid.push({ processingMs: o.slowMs + d, schedules: e.schedules, failing, complete: e.complete });
  }
  return {
    grid,
    schedules: grid.reduce((n, g) => n + g.schedules, 0),
    failing: grid.reduce((n, g) => n + g.failing, 0),
    complete: grid.every((g) => g.complete),
    succeeded,
    ...(refusal !== undefined ? { firstRefusal: refusal.line } : {}),
    byCheck,
    predictedRate: grid.length === 0 ? 0 : grid.filter((g) => g.failing > 0).length / grid.length,
    wallMs: Date.now() - t0,
  };
}

/** Runs the three approaches on a user's retry client. */
export async function runClientFlakyLab(opts: ClientFlakyOptions): Promise<ClientFlakyReport> {
  const o: Resolved = {
    client: opts.client, clientModule: opts.clientModule, variant: opts.variant ?? 'key_atomic', ...(opts.service ? { service: opts.service } : {}),
    runs: opts.runs ?? 30, slowMs: opts.slowMs ?? 2, spreadMs: opts.spreadMs ?? 40, schedulesMax: opts.schedulesMax ?? 3000, seed: opts.seed ?? 1,
  };
  if (o.service) registerService(o.service.module, o.service.def);
  const sim = await simulated(o);
  const virt = await virtualTime(o);
  const wall = await wallClock(o);
  const vacuous = vacuousSides([
    { side: 'on the wall clock', what: 'runs', total: wall.runs, succeeded: wall.succeeded, firstRefusal: wall.firstRefusal },
    { side: 'on virtual time', what: 'runs', total: virt.runs, succeeded: virt.succeeded, firstRefusal: virt.firstRefusal },
    { side: 'in the simulation', what: 'schedules', total: sim.schedules, succeeded: sim.succeeded, firstRefusal: sim.firstRefusal },
  ]);
  const failed = wall.failures + virt.failures + sim.failing > 0;
  return {
    options: { client: o.client.name, clientModule: o.clientModule, service: o.service ? `service ${o.service.def.name} (${o.service.module})` : `built-in ${o.variant}`, runs: o.runs, slowMs: o.slowMs, spreadMs: o.spreadMs, schedulesMax: o.schedulesMax, seed: o.seed },
    wallClock: wall, virtualTime: virt, simulated: sim,
    // A failure found stands whatever else was vacuous; a pass stands only where the client got through.
    verdict: failed ? 'fails' : vacuous !== undefined ? 'inconclusive' : 'holds',
    ...(!failed && vacuous !== undefined ? { inconclusive: vacuous } : {}),
  };
}
