import { Kernel } from '../sim/kernel.js';
import { EventQueue } from '../sim/queue.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { standardNormal } from '../random/normal.js';
import { Prng } from '../random/prng.js';
import { strategyCode, strategyDelayMs, StrategyCode } from '../backoff/strategies.js';
import type { StrategyName } from '../backoff/strategies.js';

/**
 * The OCC thundering-herd model (SPEC §2), a faithful port of the AWS
 * Architecture Blog simulator — aws-samples/aws-arch-backoff-simulator,
 * src/backoff_simulator.py (Marc Brooker, 2015). Where this file matches a
 * detail of the reference, the comment says `ref:`.
 *
 * N clients start at t = 0; each wants to write one shared row once:
 * read the version (one round trip), write with that version (one round
 * trip; the server accepts iff the version still matches, then bumps it), and
 * on rejection back off and start again from the read.
 *
 * Every message is one kernel callback event; there are four kinds, so one
 * OCC attempt is exactly four events (read at server, read reply at client,
 * write at server, write reply at client) — the same messages the reference
 * pops off its heap.
 */

/** Parameters of one herd run. Defaults are the reference's (SPEC §2). */
export interface HerdParams {
  clients: number;
  strategy: StrategyName;
  /** Backoff base, ms. Default 5. */
  baseMs?: number;
  /** Backoff cap, ms. Default 2000. */
  capMs?: number;
  /** One-way latency |Normal(mean, sd)|, ms. Defaults 10 and 2. */
  latencyMeanMs?: number;
  latencySdMs?: number;
  /** Upper bound on events of one run (a limit on everything). Default 50,000,000. */
  eventsMax?: number;
}

/** What one run reports. */
export interface HerdRunResult {
  /** Write requests that reached the server, successes and failures. */
  calls: number;
  /** Virtual time at which the last successful write's response reached its client. */
  ms: number;
  /** Kernel events processed (= 4 × reads, since every read is followed by a write). */
  events: number;
}

/**
 * Counts of write arrivals at the server, in 1 ms bins (bin i holds writes
 * that arrived in [i, i+1) ms) — the reference's `ts_<name>` files, which
 * log `"%d" % tm` for each write. Grows as needed; counts are integers, so
 * merging histograms is exact and order-independent.
 */
export class WriteHistogram {
  counts: Uint32Array;
  /** One past the highest non-empty bin. */
  length = 0;

  constructor(capacity = 1024) {
    this.counts = new Uint32Array(capacity);
  }

  add(timeMs: number): void {
    const i = Math.floor(timeMs);
    if (i >= this.counts.length) this.grow(i + 1);
    this.counts[i]!++;
    if (i >= this.length) this.length = i + 1;
  }

  /** Adds another histogram's counts into this one. */
  merge(counts: ArrayLike<number>): void {
    const n = counts.length;
    if (n > this.counts.length) this.grow(n);
    for (let i = 0; i < n; i++) this.counts[i]! += counts[i]!;
    for (let i = n - 1; i >= this.length; i--) {
      if (this.counts[i]! > 0) {
        this.length = i + 1;
        break;
      }
    }
  }

  /** The non-empty prefix of the counts, as a copy. */
  toArray(): Uint32Array {
    return this.counts.slice(0, this.length);
  }

  private grow(min: number): void {
    let cap = this.counts.length * 2;
    while (cap < min) cap *= 2;
    const c = new Uint32Array(cap);
    c.set(this.counts);
    this.counts = c;
  }
}

/**
 * Message kinds, packed with the client index into the event's first
 * argument as (client << 2) | kind. A const enum, so the values are inlined
 * as literals (smaller handler bytecode than module constants).
 */
const enum Msg {
  /** read request arriving at the server */
  Read = 0,
  /** read reply (payload: version) arriving at the client */
  ReadRsp = 1,
  /** write request (payload: version read) arriving at the server */
  Write = 2,
  /** write reply (payload: 1 success, 0 rejected) arriving at the client */
  WriteRsp = 3,
}

/**
 * Runs the herd once on a fresh {@link Kernel} seeded with `seed`, and returns
 * calls, completion time and events. Write arrival times are added to `hist`
 * when given. `queue`, when given, is the event queue the kernel uses (see
 * {@link herdQueue}): one queue can serve a thread's runs one after another,
 * so a run does not allocate and grow its own. Deterministic: same params
 * and seed, same result, whatever the queue.
 */
export async function runHerd(params: HerdParams, seed: number, hist?: WriteHistogram, queue?: EventQueue): Promise<HerdRunResult> {
  const clients = params.clients;
  if (!(Number.isInteger(clients) && clients >= 1)) throw new RangeError(`herd: clients must be an integer >= 1, got ${clients}`);
  const code: StrategyCode = strategyCode(params.strategy);
  if (!primed) primeStrategies();
  const k = new Kernel({ seed, trace: false, eventsMax: params.eventsMax ?? 50_000_000, replayHint: `retrysim herd (seed ${seed})`, choices: NO_CHOICES, ...(queue ? { queue } : {}) });
  // Model objects are reused run after run (see HerdModel); one taken from
  // the pool is this run's alone until it is put back.
  const m = pool.pop() ?? new HerdModel();
  m.reset(k, code, clients, params, hist);
  const h = k.on(m.handler);
  m.h = h;
  // ref: setup_sim — every client's first read leaves at t = 0, in client order.
  const rng = m.rng;
  for (let c = 0; c < clients; c++) k.at(Math.abs(m.mean + m.sd * standardNormal(rng)), h, c << 2, 0);
  let r;
  let calls;
  try {
    r = await k.run();
    calls = m.calls;
  } finally {
    m.release();
    pool.push(m);
  }
  // ref: run_sim returns the time of the last event, which is the last
  // successful write's reply (a failed reply always schedules another read).
  return { calls, ms: r.timeMs, events: r.events };
}

/** The histogram of runs that record none (never written: `record` is false). */
const NO_HIST = new WriteHistogram(1);

/** Idle model objects; in a thread that runs the herd run after run, just one. */
const pool: HerdModel[] = [];

/**
 * The model's state and its one message handler. Why a reusable object
 * rather than a closure per run: the kernel's callback loop inlines the
 * handler, and V8 guards an inlined call on the exact function object, so a
 * fresh closure every run deoptimised the loop and recompiled it (each
 * compile of the fused loop costs ~20 ms, several times per thread). With
 * one handler per thread the loop is compiled once and stays compiled.
 */
class HerdModel {
  k!: Kernel;
  /** ref: one random stream serves both the network and the backoff draws. */
  rng: Prng = new Prng(0);
  code: StrategyCode = 0;
  baseMs = 5;
  capMs = 2000;
  mean = 10;
  sd = 2;
  /** Handler id in the current kernel. */
  h = 0;
  /** ref: OccServer.version */
  version = 0;
  calls = 0;
  record = false;
  hist: WriteHistogram = NO_HIST;
  /** ref: ExpoBackoffDecorr.sleep, per client (starts at base). */
  prevSleep = new Float64Array(0);
  /** ref: OccClient.attempt, per client. */
  attempt = new Int32Array(0);

  reset(k: Kernel, code: StrategyCode, clients: number, params: HerdParams, hist: WriteHistogram | undefined): void {
    this.k = k;
    this.rng = k.fork('herd');
    this.code = code;
    this.baseMs = params.baseMs ?? 5;
    this.capMs = params.capMs ?? 2000;
    this.mean = params.latencyMeanMs ?? 10;
    this.sd = params.latencySdMs ?? 2;
    this.version = 0;
    this.calls = 0;
    this.record = hist !== undefined;
    this.hist = hist ?? NO_HIST;
    if (this.attempt.length < clients) {
      this.prevSleep = new Float64Array(clients);
      this.attempt = new Int32Array(clients);
    }
    this.prevSleep.fill(this.baseMs, 0, clients);
    this.attempt.fill(0, 0, clients);
  }

  /** Drops the reference to the caller's histogram once the run is over. */
  release(): void {
    this.hist = NO_HIST;
  }

  // Every message but a successful write's reply sends exactly one message
  // after one hop draw: forwarding kinds go to kind + 1 of the same client
  // (packed argument a + 1), a failed write's reply to the client's next
  // read (a − 3) after hop + backoff. One draw site and one `k.at` call
  // keep the handler small enough for the JIT to inline it, with the
  // queue's push, into the kernel's callback loop.
  readonly handler = (a: number, b: number): void => {
    const kind = a & 3;
    let payload = 0;
    let next = a + 1;
    if (kind === Msg.Read) {
      // ref: OccServer.read — reply with the current version; no processing time.
      payload = this.version;
    } else if (kind === Msg.ReadRsp) {
      // ref: OccClient.read_rsp — write carrying the version just read.
      payload = b;
    } else if (kind === Msg.Write) {
      // ref: OccServer.write — counts every write; accepts iff the version matches.
      this.calls++;
      if (this.record) this.hist.add(this.k.now);
      if (b === this.version) {
        this.version++;
        payload = 1;
      }
    } else {
      // ref: OccClient.write_rsp — on success the client is done.
      if (b !== 0) return;
      next = a - 3;
    }
    // ref: Net.delay() = abs(random.normalvariate(mean, sd)), one draw per
    // message hop; for a retry the backoff is drawn after the hop and added.
    const rng = this.rng;
    let t = this.k.now + Math.abs(this.mean + this.sd * standardNormal(rng));
    if (next < a) {
      this.backoff(a >> 2);
      t += this.sleep[0]!;
    }
    this.k.at(t, this.h, next, payload);
  };

  /** The backoff's result, passed through memory (see {@link HerdModel.backoff}). */
  readonly sleep = new Float64Array(1);

  /**
   * ref: OccClient.write_rsp on failure — increment attempt first (so the
   * first backoff uses n = 1); the sleep is then added to the next read's
   * hop. Kept out of the handler, so that the handler plus the kernel's
   * `at` and the queue's push fit V8's inlining budget for the callback
   * loop (a call that is not inlined boxes its double argument: an
   * allocation per event). Runs on one event in four, and returns its
   * result through `sleep[0]` rather than as a return value, which would be
   * boxed the same way.
   */
  backoff(c: number): void {
    const d = strategyDelayMs(this.code, ++this.attempt[c]!, this.baseMs, this.capMs, this.rng, this.prevSleep[c]!);
    // Only decorrelated reads prevSleep; storing for every strategy keeps
    // the code the same for all six (no deopt per strategy).
    this.prevSleep[c] = d;
    this.sleep[0] = d;
  }
}


/** An event queue sized for runs of `params` (reusable across runs, see {@link runHerd}). */
export function herdQueue(params: HerdParams): EventQueue {
  return new EventQueue(params.clients);
}

/**
 * The herd's kernel never has two runnable tasks (it has no tasks at all),
 * so it is never asked to choose; this saves building a seeded chooser per run.
 */
const NO_CHOICES: ChoiceSource = {
  name: 'none (herd: callbacks only)',
  choose(): number {
    throw new Error('herd: the kernel asked for a choice, but the herd model has no tasks');
  },
};

let primed = false;

/**
 * Runs every strategy's delay once on a throwaway generator (no effect on
 * any result), so that V8 has type feedback for all six before it optimises
 * the herd's loop. Without it each strategy met for the first time
 * deoptimises the loop and costs a recompile (~10 ms of compile time each,
 * per thread).
 */
function primeStrategies(): void {
  primed = true;
  const rng = new Prng(0);
  // V8 allocates a function's feedback only after its first few calls, so
  // go round all six several times; prevMs takes fractional values too, as
  // decorrelated's state does (an integer-only feedback deoptimised later).
  for (let i = 0; i < 16; i++) for (let code = 0; code <= 5; code++) strategyDelayMs(code as StrategyCode, 1 + (i & 3), 5, 2000, rng, 5 + 0.5 * (i & 1));
}
