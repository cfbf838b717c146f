import { stableBody, stableHeaders } from './stable-paths.js';
import type { Kernel, Task } from '../sim/kernel.js';
import type { Future } from '../sim/future.js';
import type { Prng } from '../random/prng.js';
import { union, type Footprint } from '../sim/footprint.js';
import { absNormal } from '../random/normal.js';
import type { StepEnv, Deferred } from '../tracker/env.js';
import type { TrackerRequest, TrackerResponse } from '../tracker/messages.js';
import type { Transport, WireOutcome } from '../harness/transport.js';

/** Network knobs; the defaults mean a fast, loss-free link. */
export interface NetworkOptions {
  /** One-way latency |N(mean, sd)| per message, ms. Default 1. */
  latencyMeanMs?: number;
  /** Default 0 (fixed latency). */
  latencySdMs?: number;
  /** Lose the next N responses on the way back (any response). Default 0. */
  loseResponses?: number;
  /** Answer the next `count` requests reaching a live server with 429 and `Retry-After: retryAfterS`, before the handler. Default: never. */
  throttle?: { count: number; retryAfterS: number };
  /**
   * Answer the next `count` requests reaching a live server with `status`
   * (after the throttle, before the handler: a gateway, an auth proxy or an
   * overloaded front end answering for the service). Default: never.
   */
  answer?: { status: number; count: number };
}

/** When to kill a server process (`kill -9`) and how long until it restarts. */
export interface KillPlan {
  instance: number;
  atMs?: number;
  atStep?: string;
  /** With `atStep`: the instance's n-th reach of that step, by any of its requests (1-based); default the first. */
  nth?: number;
  /** When the instance's n-th handler (1-based) has returned, before its answer leaves (the client sees the connection close). */
  atAnswer?: number;
  restartAfterMs: number;
}

/**
 * How long a process that crashed (an unhandled rejection, an uncaught exception) takes to come
 * back: a supervisor's restart (systemd, a container runtime), as the kill
 * fault's default `restartAfterMs`.
 */
export const CRASH_RESTART_MS = 500;

/** Footprint resources of the network (see the constructor). */
const RNG = 'net:rng';
const ROUND_ROBIN = 'net:round-robin';
const LOSE = 'net:lose-responses';
const THROTTLE = 'net:throttle';
const ANSWER = 'net:answer';
/** What each status the `answer` fault can send says (the body a client may log). */
const ANSWER_TEXT: Readonly<Record<number, string>> = {
  400: 'bad request', 401: 'unauthorized', 403: 'forbidden', 404: 'not found', 408: 'request timeout', 409: 'conflict',
  422: 'unprocessable content', 429: 'too many requests', 500: 'internal server error', 502: 'bad gateway', 503: 'service unavailable', 504: 'gateway timeout',
};
/**
 * What the network hosts: one server process of any service (a tracker
 * instance, or a user's service through the service API).
 */
export interface HostedInstance {
  /** Serves one request; the env supplies time and interleaving. */
  handle(req: TrackerRequest, env: StepEnv): Promise<TrackerResponse>;
  /** A process restart after a kill: in-process memory is lost, the database is kept. */
  restart(): void;
  /** The process was killed (`kill -9`): what it had scheduled (its timers) dies with it, before the restart. Optional. */
  killed?(): void;
  /** Gives the process the way to crash on this network (an error nothing handled: {@link SimNetwork.crash}). Optional. */
  onCrash?(crash: (text: string) => void): void;
  /** Effects in the database now, for the trace's `db: +1 report` lines; undefined: not traced. */
  effectCount(): number | undefined;
  /** What an effect is called in the trace. Default `report`. */
  readonly effectNoun?: string;
  /**
   * Where the effects live, as the trace's effect lines say it: `db` (the
   * default: a service's SQL database) or `store` (a hosted app's simulated
   * key-value store, which is no database).
   */
  readonly effectStore?: EffectStore;
}

/** Where a hosted process keeps its effects, the word that starts its trace's effect lines (`db: +1 report`, `store: +1 order`). */
export type EffectStore = 'db' | 'store';

/** Whether a trace event is an effect line (`db: +1 report`, `store: +1 order`). */
export function isEffectLine(event: string): boolean {
  return event.startsWith('db:') || event.startsWith('store:');
}

/** The count an effect line adds (`db: +2 reports` → 2), or undefined for any other event or a removal. */
export function effectsAdded(event: string): number | undefined {
  const m = /^(?:db|store): \+(\d+)/.exec(event);
  return m === null ? undefined : Number(m[1]);
}

/** One server process on the simulated network. */
export class SimServer {
  up = true;
  /** Kills of this process, crashes of its own ({@link crashed}) included. */
  kills = 0;
  /** Of those, the crashes its own code caused (an unhandled rejection or uncaught exception: {@link SimNetwork.crash}), not a fault of the scenario. */
  crashed = 0;
  /** Handlers of this process that returned an answer, counted while an `atAnswer` kill plan is pending for it. */
  answered = 0;
  /** In-flight request tasks and the replies their clients wait for. */
  readonly inflight = new Map<Task<unknown>, (o: WireOutcome) => void>();
  constructor(readonly index: number, readonly instance: HostedInstance) {}
}

/**
 * The simulated network between harness clients and tracker instances. Every
 * request is its own kernel task on the server side, so requests interleave
 * at the service's step points; each message hop is an independent latency
 * draw. Requests are spread over instances round-robin (a load balancer).
 */
export class SimNetwork {
  /** Answers lost on the way back by `loseResponses` (a campaign's coverage reads it). */
  answersLost = 0;
  private requests = 0;
  private loseLeft: number;
  private throttleLeft: number;
  private readonly retryAfterS: number;
  private answerLeft: number;
  private readonly answerStatus: number;
  private readonly meanMs: number;
  private readonly sdMs: number;
  /** The crashes so far ({@link crash}): which process, and `unhandled rejection: Error: … (at file:line)` (or `uncaught exception: …`). */
  readonly crashes: Array<{ instance: string; cause: string }> = [];
  private killPending: KillPlan | undefined;
  /** Reaches of the pending kill's step so far (for its `nth`). */
  private killReaches = 0;
  private readonly hasKill: boolean;
  /** What every request phase may add to its strategy's footprint: a latency draw when the phase ends in the response. */
  readonly phaseExtra: Footprint | undefined;
  /** What a client step may touch: the shared request counter picks the instance when there are several. */
  readonly clientFootprint: Footprint | undefined;
  /** @internal Each request task's step environment (a waiter on another request's result needs its own). */
  readonly envs = new WeakMap<Task<unknown>, SimStepEnv>();

  constructor(
    /** The kernel this network runs on. */
    readonly kernel: Kernel,
    readonly servers: readonly SimServer[],
    private readonly rng: Prng,
    opts: NetworkOptions = {},
    kill?: KillPlan,
  ) {
    this.meanMs = opts.latencyMeanMs ?? 1;
    this.sdMs = opts.latencySdMs ?? 0;
    this.loseLeft = opts.loseResponses ?? 0;
    this.throttleLeft = opts.throttle?.count ?? 0;
    this.retryAfterS = opts.throttle?.retryAfterS ?? 0;
    this.answerLeft = opts.answer?.count ?? 0;
    this.answerStatus = opts.answer?.status ?? 0;
    if (kill?.atMs !== undefined) kernel.schedule(kill.atMs, () => this.kill(kill.instance, kill.restartAfterMs, `at ${kill.atMs} ms (faults.kill.atMs)`));
    else this.killPending = kill;
    for (const srv of servers) srv.instance.onCrash?.((text) => this.crash(srv.index, text));
    // Footprints (for exhaustive exploration's reduction). The real sources
    // of dependence on the network: one latency stream shared in draw order
    // (only when latency is random), the request counter (round-robin over
    // several instances; with one instance it only names request tasks, and
    // outcomes do not depend on names), the lost-answer counter, and a kill,
    // which ends every in-flight request at once — with a kill plan nothing
    // is declared independent.
    this.hasKill = kill !== undefined;
    this.phaseExtra = this.hasKill ? undefined : this.sdMs > 0 ? { writes: [RNG] } : {};
    this.clientFootprint = this.hasKill ? undefined : servers.length > 1 ? { writes: [ROUND_ROBIN] } : {};
  }

  private latency(): number {
    return this.sdMs === 0 ? this.meanMs : absNormal(this.rng, this.meanMs, this.sdMs);
  }

  /** A transport for one client; `name` labels its requests in schedules and traces. */
  transport(name: string): Transport {
    return { send: (req, timeoutMs) => this.send(name, req, timeoutMs) };
  }

  private async send(client: string, req: TrackerRequest, timeoutMs: number): Promise<WireOutcome> {
    const k = this.kernel;
    const n = ++this.requests;
    const server = this.servers[(n - 1) % this.servers.length]!;
    const reply = k.future<WireOutcome>();
    const name = `s${server.index}/${client}#${n}`;
    // The whole request (method, path, every header — the key, the tenant — and the body) is part of the run's identity.
    k.logHashed(name, 'request', { method: req.method, path: req.path, headers: req.headers, body: req.body });
    // The step that resolves the reply races the client's timeout at the same instant.
    const answer = this.hasKill ? undefined : { writes: [`reply:${n}`] };
    const task: Task<void> = k.spawn(name, async () => {
      // Arrival: the first strategy phase starts with a step; a GET or a
      // refused body answers at once (a latency draw).
      // While the throttle counter is armed, whichever request arrives first takes it.
      const arrive = req.method === 'POST' ? this.phaseExtra : undefined;
      const counters = this.throttleLeft > 0 || this.answerLeft > 0 ? { writes: [...(this.throttleLeft > 0 ? [THROTTLE] : []), ...(this.answerLeft > 0 ? [ANSWER] : [])] } : undefined;
      await k.sleep(this.latency(), counters ? union(arrive, counters) : arrive);
      if (!server.up) {
        k.log(name, 'refused', { server: server.index });
        await k.sleep(this.latency(), answer);
        reply.resolve({ kind: 'transport_error', reason: 'connection_refused' });
        return;
      }
      if (this.throttleLeft > 0) {
        // A rate limiter in front of the service: the handler never sees the request.
        this.throttleLeft--;
        const headers = { 'content-type': 'application/json', 'retry-after': String(this.retryAfterS) };
        // Shown in --trace (the timeline would otherwise say nothing happened), headers hashed.
        k.log(name, 'answer 429 (throttled)', { retryAfterS: this.retryAfterS });
        k.logHashed(name, 'answer headers', { status: 429, headers });
        await k.sleep(this.latency(), answer);
        reply.resolve({ kind: 'response', status: 429, headers, body: JSON.stringify({ error: `too many requests; retry after ${this.retryAfterS} s` }), injected: true });
        return;
      }
      if (this.answerLeft > 0) {
        // The `answer` fault: something in front of the service answers for it; the handler never sees the request.
        this.answerLeft--;
        const status = this.answerStatus;
        const headers = { 'content-type': 'application/json' };
        k.log(name, `answer ${status} (injected)`);
        k.logHashed(name, 'answer headers', { status, headers });
        await k.sleep(this.latency(), answer);
        reply.resolve({ kind: 'response', status, headers, body: JSON.stringify({ error: ANSWER_TEXT[status] ?? `HTTP ${status}` }), injected: true });
        return;
      }
      server.inflight.set(task, (o) => reply.resolve(o));
      const env = new SimStepEnv(this, server, name);
      this.envs.set(task, env);
      const res = await server.instance.handle(req, env);
      env.settleDb();
      // An `atAnswer` kill lands now, before the answer leaves: the request stays in
      // flight, so the kill (due now, before any task resumes) closes its connection.
      if (!this.killAtAnswer(server)) server.inflight.delete(task);
      // Recorded without this machine's paths (an error page's stack names them).
      const recorded = stableBody(res.body);
      const data: Record<string, unknown> = { body: recorded };
      if (res.replay) data.replay = true;
      k.log(name, `answer ${res.status}`, data);
      k.logHashed(name, 'answer headers', { status: res.status, headers: recorded === res.body ? res.headers : stableHeaders(res.headers, recorded) });
      await k.sleep(this.latency(), this.loseLeft > 0 ? union(answer, { writes: [LOSE] }) : answer);
      if (res.dropConnection || this.loseLeft > 0) {
        if (!res.dropConnection) {
          this.loseLeft--;
          this.answersLost++;
        }
        k.log(name, 'response lost', { status: res.status });
        reply.resolve({ kind: 'transport_error', reason: 'connection_closed' });
        return;
      }
      reply.resolve({ kind: 'response', status: res.status, headers: res.headers, body: res.body });
    }, { footprint: this.phaseExtra });
    const r = await reply.waitFor(timeoutMs, this.clientFootprint === undefined ? undefined : union(this.clientFootprint, { reads: [`reply:${n}`] }));
    if (!r.done) {
      k.log(client, 'timeout', { request: n, afterMs: timeoutMs });
      return { kind: 'transport_error', reason: 'timeout' };
    }
    return r.value;
  }

  /** Whether a pending `atAnswer` kill plan fires on this answer of `server` (then scheduled for now). */
  private killAtAnswer(server: SimServer): boolean {
    // Nothing to count on a run without such a plan (every answer passes here).
    const plan = this.killPending;
    if (plan?.atAnswer === undefined || plan.instance !== server.index || ++server.answered !== plan.atAnswer) return false;
    this.killPending = undefined;
    this.kernel.schedule(0, () => this.kill(server.index, plan.restartAfterMs, `as answer ${plan.atAnswer} of s${server.index} left (faults.kill.atAnswer)`));
    return true;
  }

  /** @internal A step of a request on server `index`: fires a pending `atStep` kill plan. */
  beforeStep(index: number, label: string): void {
    const plan = this.killPending;
    if (plan && plan.instance === index && plan.atStep === label && (plan.nth === undefined || ++this.killReaches === plan.nth)) {
      this.killPending = undefined;
      // The kill lands before this request runs its next step: the task
      // yields, and events due now are processed before any task resumes.
      const reach = plan.nth === undefined ? '' : `, its reach ${plan.nth}`;
      this.kernel.schedule(0, () => this.kill(index, plan.restartAfterMs, `as a request of s${index} reached step '${label}'${reach} (faults.kill.atStep)`));
    }
  }

  /**
   * The process of server `index` dies of an error nothing handled (`text`:
   * `unhandled rejection: Error: … (at file:line)`, or `uncaught exception: …`
   * for a timer callback of a hosted app that threw), as a Node process does:
   * exactly a kill (in-flight requests unanswered, memory lost, committed
   * rows kept), landing before the current task runs on, and a restart after
   * {@link CRASH_RESTART_MS}. The trace shows the cause; its hash holds the
   * crash without the file path (the same run on another machine hashes alike).
   */
  crash(index: number, text: string): void {
    if (!this.servers[index]!.up) return;
    this.crashes.push({ instance: `s${index}`, cause: text });
    this.servers[index]!.crashed++;
    this.kernel.logHashed(`s${index}`, 'process crashed', {});
    this.kernel.note(`s${index}`, `process crashed: ${text}`);
    this.kernel.schedule(0, () => this.kill(index, CRASH_RESTART_MS));
  }

  /**
   * `kill -9` of one server: in-flight requests never run again (their
   * clients see the connection close), in-process memory is lost, committed
   * SQLite rows survive; the process restarts after `restartAfterMs`.
   */
  kill(index: number, restartAfterMs: number, cause?: string): void {
    const server = this.servers[index]!;
    if (!server.up) return;
    server.up = false;
    server.kills++;
    this.kernel.log(`s${index}`, 'kill', { inflight: server.inflight.size, restartAfterMs });
    // Which fault fired, and where: the step it waits at is never shown as reached (the kill lands first), so a
    // reader of the timeline saw the request's previous step and took the kill for one there. Shown, not hashed.
    if (cause !== undefined) this.kernel.note(`s${index}`, `the kill fault fired ${cause}`);
    for (const [task, answer] of server.inflight) {
      this.kernel.kill(task);
      answer({ kind: 'transport_error', reason: 'connection_closed' });
    }
    server.inflight.clear();
    server.instance.killed?.();
    this.kernel.schedule(restartAfterMs, () => {
      server.instance.restart();
      server.up = true;
      this.kernel.log(`s${index}`, 'restart');
    });
  }
}

/**
 * The tracker's {@link StepEnv} for one request on the simulated network: a
 * class rather than an object of closures, since every request builds one.
 */
class SimStepEnv implements StepEnv {
  private readonly k: Kernel;
  /** Reports in the database when this request last resumed. */
  private mark: number | undefined;
  private readonly noun: string;
  private readonly store: EffectStore;
  /**
   * Whether to count effects at all: the counts only feed trace lines, and a
   * campaign's hot loop runs without a trace (counting was a third of its
   * SQL statements).
   */
  private readonly counting: boolean;

  constructor(
    private readonly net: SimNetwork,
    private readonly server: SimServer,
    /** The request's task name, the actor of its trace lines. */
    private readonly name: string,
  ) {
    this.k = net.kernel;
    this.counting = this.k.trace !== undefined;
    this.mark = this.counting ? server.instance.effectCount() : undefined;
    this.noun = server.instance.effectNoun ?? 'report';
    this.store = server.instance.effectStore ?? 'db';
  }

  now(): number {
    return this.k.now;
  }

  /**
   * Logs what the phase that just ran did to the database. Between two
   * suspension points only this request runs (transactions never span an
   * await), so the change in the report count is this request's own.
   */
  settleDb(): void {
    if (!this.counting) return;
    const n = this.server.instance.effectCount();
    if (n !== undefined && this.mark !== undefined && n !== this.mark) {
      const change = `${n > this.mark ? '+' : ''}${n - this.mark} ${this.noun}${Math.abs(n - this.mark) === 1 ? '' : 's'}`;
      if (this.store === 'db') this.k.log(this.name, `db: ${change}`);
      else {
        // A hosted app's store is the simulated key-value store, no database: the line shown says so, while the
        // entry hashed stays the `db:` one every recorded run was hashed with (its trace hash is its identity).
        this.k.logHashed(this.name, `db: ${change}`);
        this.k.note(this.name, `${this.store}: ${change}`);
      }
    }
    this.mark = n;
  }

  private resumed(): void {
    if (this.counting) this.mark = this.server.instance.effectCount();
  }

  async step(label: string, footprint?: Footprint): Promise<void> {
    // settleDb and resumed count reports only for the trace: not a read that orders anything.
    this.settleDb();
    this.net.beforeStep(this.server.index, label);
    await this.k.yield(label, union(footprint, this.net.phaseExtra));
    this.k.log(this.name, label);
    this.resumed();
  }

  note(event: string): void {
    this.k.note(this.name, event);
  }

  detail(event: string, call: string, answer: string): void {
    this.k.detail(this.name, event, call, answer);
  }

  async sleep(ms: number, footprint?: Footprint): Promise<void> {
    this.settleDb();
    await this.k.sleep(ms, union(footprint, this.net.phaseExtra));
    this.resumed();
  }

  defer<T>(): Deferred<T> {
    return new FutureDeferred<T>(this.k.future<T>(), this.net);
  }

  async sleepOrWake(ms: number, wake: Deferred<void>, footprint?: Footprint): Promise<void> {
    if (!(wake instanceof FutureDeferred)) throw new Error('sleepOrWake: wake must come from this environment\'s defer()');
    if (!(ms >= 0)) throw new RangeError(`sleepOrWake(${ms}): ms must be >= 0`);
    this.settleDb();
    // Labelled as sleep() labels its wait, so a run where nothing wakes it early is the same run.
    if (!wake.f.settled) await this.k.block(wake.f, ms, 'sleep', union(footprint, this.net.phaseExtra));
    this.resumed();
  }

  /** @internal Wraps a wait on another request's result. */
  async suspend<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } finally {
      this.resumed();
    }
  }
}

/** A kernel {@link Future} seen through the tracker's {@link Deferred} interface. */
class FutureDeferred<T> implements Deferred<T> {
  constructor(
    readonly f: Future<T>,
    private readonly net: SimNetwork,
  ) {}

  resolve(v: T): void {
    this.f.resolve(v);
  }

  reject(e: unknown): void {
    this.f.reject(e);
  }

  wait(): Promise<T> {
    // The waiter is whichever request runs now, not the one that made this.
    const env = this.net.envs.get(this.net.kernel.currentTask());
    if (env === undefined) return this.f.wait();
    env.settleDb();
    return env.suspend(this.f.wait());
  }
}
