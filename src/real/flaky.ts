import { describeThrow, ServiceError } from '../service/errors.js';
import { armRejections, disarmRejections, probeRejection } from '../sim/rejections.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../random/prng.js';
import { submitReport, type AttemptRecord } from '../harness/client.js';
import type { Transport, WireOutcome } from '../harness/transport.js';
import { Kernel } from '../sim/kernel.js';
import { awaitPendingTimers, runOnVirtualTime } from '../sim/fake-timers.js';
import { exploreAll } from '../sim/explore/exhaustive.js';
import type { ChoiceRecord } from '../sim/choice/source.js';
import { runScenario } from '../scenario/run.js';
import { scenarioSchema, type Scenario } from '../scenario/schema.js';
import { TrackerInstance } from '../tracker/instance.js';
import { openStore } from '../tracker/store.js';
import { realEnv } from '../tracker/real-env.js';
import type { Variant } from '../tracker/strategy.js';
import { ServerProcess } from './child.js';
import { httpJson, httpTransport, realClientEnv } from './http-transport.js';
import { SETTLE_LIMIT_MS, settle } from './scenario-real.js';
import { upperBound } from './stats.js';
import Database from 'better-sqlite3';
import type { Endpoint } from '../harness/client.js';
import type { ServiceDb, ServiceDefinition } from '../service/definition.js';
import { ServiceDatabase } from '../service/db.js';
import { ServiceHost } from '../service/host.js';
import { serviceEpochField, serviceEpochMs } from '../service/epoch.js';
import { endpointOf } from '../service/run.js';
import { registerService } from '../service/registry.js';
import { isHostedApp } from '../app/define.js';
import { RandomChoice } from '../sim/choice/random.js';
import { builtinService } from '../tracker/builtin.js';
import { checkServiceInvariants } from '../service/check.js';
import { serviceIntent } from '../scenario/arbitraries.js';
import type { Invariant, OperationEnd, Violation } from '../checkers/invariants.js';

/**
 * The flakiness lab (SPEC §7). One timing-dependent test — two workers file
 * the same report with the same key at about the same time; exactly one
 * report must exist — run three ways:
 *
 * 1. wall clock: real sleeps, real HTTP, a real `retrysim serve` process,
 *    N times, each with its own random stagger; the result is k failures in
 *    N with an exact upper bound on the failure rate;
 * 2. the same test function on virtual time through the fake-timers bridge
 *    (an in-process transport to the same tracker code): the sleeps vanish,
 *    the outcome per seed stays;
 * 3. the simulation: the same scenario on the kernel, every interleaving of
 *    every stagger on a 1 ms grid enumerated on purpose — which schedules
 *    fail, exactly, and each one replayable.
 */

/** The lab's knobs. */
export interface FlakyOptions {
  /** Wall-clock (and virtual-time) runs. Default 30. */
  runs?: number;
  /** Default key_split (the strategy with a race window). */
  variant?: Variant;
  /** Server processing time. Default 2 ms. */
  slowMs?: number;
  /** The second worker starts U[0, staggerMaxMs) after the first. Default 40 ms. */
  staggerMaxMs?: number;
  seed?: number;
  /** Enumeration bound per stagger value. Default 3000 schedules. */
  schedulesMax?: number;
  /**
   * A user's service instead of the built-in tracker (then `variant` is not
   * used): the same test — two workers, one operation, one key — sends the
   * service's own operation and counts its declared effects.
   */
  service?: { def: ServiceDefinition; module: string };
}

/** The lab's options as the report shows them (a user's service by name and module). */
export type FlakyReportOptions = Required<Omit<FlakyOptions, 'service'>> & { service?: { name: string; module: string } };

/** Outcome of one run of the test. */
export interface TestRun {
  staggerMs: number;
  reports: number;
  /** Some invariant judged on this run failed (see `violations`). */
  failed: boolean;
  /**
   * What the run broke. On a user's service: the campaign's own checkers
   * (src/service/check.ts) on the run's attempts, answers and effects —
   * exactly-one, id-exists, stable-key, replay-equals-first. On the built-in
   * tracker: exactly-one, from its report count.
   */
  violations: Violation[];
  /**
   * Wall clock: the server was still at work (a request, a timer a handler
   * armed) when the settle limit ran out, so the effects were read before
   * that work was done. Absent when it settled.
   */
  unsettled?: true;
}

/**
 * One invariant's verdict over the lab's three sides: how many wall-clock
 * runs, virtual-time runs and simulated schedules broke it (null: that side
 * does not judge it), and an example of how. A row no side judges says why.
 */
export interface InvariantRow {
  invariant: Invariant;
  /** fails if any side saw it broken; holds if every side judging it saw it kept (inconclusive when on some side nothing was made: the lab's verdict); absent when no side judges it. */
  verdict?: 'holds' | 'fails' | 'inconclusive';
  /** Why no side judges it (e.g. tenant-isolation in a one-tenant test). */
  notJudged?: string;
  wallClock: number | null;
  virtualTime: number | null;
  simulated: number | null;
  /** The first violation seen (simulation first, then virtual time, then wall clock). */
  example?: string;
}

/** A side of the comparison: counts, bound, and time spent. */
export interface ApproachResult {
  runs: number;
  failures: number;
  /** Runs whose effects were read with the server still at work after the settle limit (wall clock; 0 elsewhere). */
  unsettled: number;
  /** Exact one-sided 95 % upper bound on the failure rate (Clopper–Pearson). */
  upperBound95: number;
  wallMs: number;
}

/** The simulated side: schedules explored per stagger. */
export interface SimulatedResult {
  staggers: Array<{ staggerMs: number; schedules: number; failing: number; complete: boolean }>;
  schedules: number;
  failing: number;
  /** Every stagger's tree was enumerated to the end. */
  complete: boolean;
  /** Schedules that broke each invariant (a schedule may break several). */
  byInvariant: Partial<Record<Invariant, number>>;
  /** The first violation of each invariant seen, as the checker words it. */
  examples: Partial<Record<Invariant, string>>;
  /** The invariants this side judges (the service campaign's, progress when the service declares it). */
  judged: Invariant[];
  /** Failing interleavings of the server steps, as "w0:check w1:check …", most common first. */
  failingPatterns: Array<{ pattern: string; schedules: number; staggerMs: number[] }>;
  /** Share of the stagger grid at which some schedule fails (the model's estimate of the wall-clock rate). */
  predictedRate: number;
  /** How many effects the operation left, each count seen in some schedule, ascending. */
  effectCounts: number[];
  wallMs: number;
}

/** Everything the lab measured. */
export interface FlakyReport {
  options: FlakyReportOptions;
  wallClock: ApproachResult & { perRun: TestRun[] };
  virtualTime: ApproachResult & { virtualMs: number; perRun: TestRun[]; how: VirtualHow };
  simulated: SimulatedResult;
  /** Each invariant the lab judges, with the campaign's verdict words. */
  invariants: InvariantRow[];
  /**
   * fails if any invariant fails; else inconclusive when on some side no run
   * or schedule left a single effect (a service that refuses every request
   * — a 503, a 401 — keeps every invariant with none made: check --service
   * says inconclusive there too);
   * else holds. The exit code: 1, 4, 0.
   */
  verdict: 'holds' | 'fails' | 'inconclusive';
  /** Why the verdict is inconclusive: the sides that never saw an effect. */
  inconclusive?: string;
}

type Resolved = Required<Omit<FlakyOptions, 'service'>> & Pick<FlakyOptions, 'service'>;

function withDefaults(o: FlakyOptions): Resolved {
  return {
    ...(o.service ? { service: o.service } : {}),
    runs: o.runs ?? 30,
    variant: o.variant ?? 'key_split',
    slowMs: o.slowMs ?? 2,
    staggerMaxMs: o.staggerMaxMs ?? 40,
    seed: o.seed ?? 1,
    schedulesMax: o.schedulesMax ?? 3000,
  };
}

/**
 * The built-in tracker's bug report. A user's service gets its own words
 * ({@link LabTarget.words}): it got this report whatever the service, so one
 * that validates its own fields answered 500 in every lane and the lab said
 * it kept every invariant.
 */
const TRACKER_WORDS = { module: 'checkout', title: 'Pay button does nothing', steps: '1. press Pay' };

/**
 * The test itself, written as an ordinary wall-clock test would be: plain
 * setTimeout sleeps, Date-based clients. It runs unchanged for real and
 * under the fake-timers bridge. The stagger comes from the run's seed.
 * `settle`: waits, once both workers are done, for the work the service
 * deferred past its answers (a 202 whose effect a timer writes), as the
 * simulation runs such a timer before judging; false when it gave up.
 */
export async function sameKeyConcurrencyTest(transport: Transport, runId: string, seed: number, staggerMaxMs: number, target?: LabTarget, settle?: () => Promise<boolean>): Promise<TestRun> {
  const rng = new Prng(seed);
  const staggerMs = rng.uniform(0, staggerMaxMs);
  const intent = { runId, ...(target ? target.words : TRACKER_WORDS) };
  const opts = { keySource: 'tool_call' as const, maxAttempts: 6, ...(target ? { endpoint: target.endpoint } : {}) };
  // One log per worker: both make the same call, so the worker names whose attempt a sentence is about.
  const logs: [AttemptRecord[], AttemptRecord[]] = [[], []];
  // A service's call is check --service's `call-1`; `toolu_1` is the tracker's tool_use id.
  const call = target ? 'call-1' : 'toolu_1';
  const first = submitReport(intent, call, transport, realClientEnv(rng.fork('w0')), opts, logs[0]);
  await new Promise((r) => setTimeout(r, staggerMs));
  const second = submitReport(intent, call, transport, realClientEnv(rng.fork('w1')), opts, logs[1]);
  const results = await Promise.all([first, second]);
  // Judged right away, a correct service answering 202 and writing from a
  // setTimeout failed exactly-one and id-exists in most runs here while the
  // simulation (and check --service) counted that write as part of the run.
  const unsettled = settle !== undefined && !(await settle()) ? { unsettled: true as const } : {};
  if (target) {
    const attempts = logs.flatMap((l, i) => l.map((a) => ({ ...a, worker: `op1.w${i}` })));
    const { reports, violations } = target.judge({ id: 'op1', runId, tenant: 'default', keySource: 'tool_call', attempts, results });
    return { staggerMs, reports, failed: violations.length > 0, violations, ...unsettled };
  }
  const reports = await listReports(transport, runId);
  const violations: Violation[] = reports > 1 ? [{ invariant: 'exactly-one', op: 'op1', detail: `${reports} reports for one logical operation` }]
    : reports === 0 && results.some((r) => r.kind === 'success') ? [{ invariant: 'exactly-one', op: 'op1', detail: 'the client was told it succeeded, but no report exists' }] : [];
  return { staggerMs, reports, failed: violations.length > 0, violations, ...unsettled };
}

/** The built-in tracker's count of a run's reports, through its own API. */
async function listReports(transport: Transport, runId: string): Promise<number> {
  const list = await transport.send({ method: 'GET', path: `/reports?run_id=${encodeURIComponent(runId)}`, headers: {}, body: '' }, 5000);
  if (list.kind !== 'response' || list.status !== 200) throw new Error(`listing reports of ${runId} failed: ${JSON.stringify(list)}`);
  return (JSON.parse(list.body) as { reports: unknown[] }).reports.length;
}

/**
 * A user's service under the lab's test: how one operation goes on the wire
 * (its declared operation), and how many effects an operation left (its
 * declared `effects.of`, read from the service's database).
 */
export interface LabTarget {
  endpoint: Endpoint;
  /** The operation's words, the service's own (`<noun> 1`, as check --service's first operation). */
  words: { module: string; title: string; steps: string };
  /** The operation's effect count and the service campaign's verdicts on it (the same checkers, not a copy). */
  judge(op: OperationEnd): { reports: number; violations: Violation[] };
}

function targetOf(def: ServiceDefinition, db: ServiceDb): LabTarget {
  return {
    endpoint: endpointOf(def),
    words: serviceIntent(def.effects.noun, 1),
    judge: (op) => {
      const v = checkServiceInvariants(def, db, [op]);
      return { reports: v.reports[op.id] ?? 0, violations: v.violations };
    },
  };
}

/** What the wall-clock and virtual-time runs judge: the campaign's end-of-run checks on a service; the report count on the built-in tracker. */
export function runJudged(service: boolean): Invariant[] {
  return service ? ['exactly-one', 'id-exists', 'stable-key', 'replay-equals-first'] : ['exactly-one'];
}

/** What the simulation judges: the campaign's checks, and progress (with its recovery phase) when the service declares it. */
export function simulatedJudged(def: ServiceDefinition | undefined): Invariant[] {
  return [...runJudged(true), ...(def?.progress !== undefined ? ['progress' as const] : [])];
}

function summarize(perRun: TestRun[], wallMs: number): ApproachResult {
  const failures = perRun.filter((r) => r.failed).length;
  return { runs: perRun.length, failures, unsettled: perRun.filter((r) => r.unsettled).length, upperBound95: upperBound(failures, perRun.length), wallMs };
}

/** 1. Wall clock: N runs against one real server process (`retrysim serve`, the variant or the user's service). */
export async function runWallClock(o: Resolved): Promise<ApproachResult & { perRun: TestRun[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'retrysim-flaky-'));
  const dbPath = join(dir, o.service ? 'service.db' : 'tracker.db');
  // Admin routes on (loopback only, no fault armed): `/_admin/counts` says when the server's deferred work is done.
  const server = new ServerProcess({ ...(o.service ? { module: o.service.module } : { variant: o.variant }), dbPath, slowMs: o.slowMs, admin: true });
  let reader: Database.Database | undefined;
  try {
    const port = await server.start();
    const transport = httpTransport(port);
    // The server process owns the file; this connection only reads the effects it committed (WAL).
    reader = o.service ? new Database(dbPath, { readonly: true }) : undefined;
    const target = o.service && reader ? targetOf(o.service.def, reader) : undefined;
    const t0 = Date.now();
    const perRun: TestRun[] = [];
    for (let i = 0; i < o.runs; i++) {
      try {
        // What the server had running before this run (an interval an earlier run left) is not this run's to wait for.
        const before = await backgroundOf(port);
        perRun.push(await sameKeyConcurrencyTest(transport, `flaky-${i}`, runSeed(o.seed, i), o.staggerMaxMs, target, () => settle(server, SETTLE_LIMIT_MS, before)));
      } catch (e) {
        // A server that died under the test (an unhandled rejection ends a real process) is named, not a refused port's stack.
        const died = await server.death();
        if (died !== undefined) throw new ServiceError(o.service?.def.name ?? o.variant, `${died}, found at wall-clock run ${i + 1} of ${o.runs}`);
        throw e;
      }
    }
    return { ...summarize(perRun, Date.now() - t0), perRun };
  } finally {
    reader?.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The server's background work now (timers its handlers armed and did not await), from `/_admin/counts`. */
export async function backgroundOf(port: number): Promise<number> {
  const r = await httpJson(port, 'GET', '/_admin/counts');
  if (r.status !== 200) throw new Error(`reading /_admin/counts failed: ${r.status} ${JSON.stringify(r.json)}`);
  return (r.json as { background?: number }).background ?? 0;
}

/** An in-process transport: the tracker handles the request directly, on whatever clock setTimeout/Date give it. */
function inProcessTransport(instance: { handle: TrackerInstance['handle'] }): Transport {
  return {
    send: async (req): Promise<WireOutcome> => {
      let res: Awaited<ReturnType<typeof instance.handle>>;
      try {
        res = await instance.handle(req, realEnv());
      } catch (e) {
        // A handler that threw: answered 500 here as `retrysim serve` answers
        // it (the test over real HTTP sees the same), not a broken service.
        if (e instanceof ServiceError && e.answer !== undefined) res = e.answer;
        else throw e;
      }
      if (res.dropConnection) return { kind: 'transport_error', reason: 'connection_closed' };
      return { kind: 'response', status: res.status, headers: res.headers, body: res.body };
    },
  };
}

/**
 * Run i's seed: seed × 1,000,003 + i, kept a safe integer for any seed the
 * CLI accepts (the same value as before for every seed below ~9 × 10⁹).
 */
export function runSeed(seed: number, i: number): number {
  return Number((BigInt(seed) * 1_000_003n + BigInt(i)) % BigInt(Number.MAX_SAFE_INTEGER));
}

/** 2. The same test function on virtual time (fake-timers bridge), same seeds. */
export async function runVirtualTime(o: Resolved): Promise<ApproachResult & { virtualMs: number; perRun: TestRun[]; how: VirtualHow }> {
  if (o.service && isHostedApp(o.service.def)) return { ...(await appOnVirtualTime(o, o.service)), how: 'simulation host' };
  const store = o.service ? undefined : openStore(':memory:');
  const sdb = o.service ? new ServiceDatabase(o.service.def, new Database(':memory:')) : undefined;
  const instance = o.service ? new ServiceHost(o.service.def, sdb!, 's0', { slowMs: o.slowMs }) : new TrackerInstance({ variant: o.variant, db: store!, faults: { slowMs: o.slowMs } });
  const target = o.service ? targetOf(o.service.def, sdb!.db) : undefined;
  const transport = inProcessTransport(instance);
  const t0 = Date.now();
  let virtualMs = 0;
  const perRun: TestRun[] = [];
  // A promise the service leaves rejected and unhandled ends a real process (the wall-clock lane's server); here it
  // would end retrysim's own, with a stack trace and exit 1 read as "fails". Collected, and named after the run.
  if (o.service) armRejections();
  try {
    for (let i = 0; i < o.runs; i++) {
      const k = new Kernel({ seed: o.seed, trace: false });
      // The one-shot timers pending once the workers are done (a handler's deferred write) fire on virtual time before judging, as in the simulation.
      const settleVirtual = async () => (await awaitPendingTimers(), true);
      // A user's service lives in the present on every lane, as it does on the wall-clock one (src/sim/epoch.ts).
      const task = k.spawn('test', () => runOnVirtualTime(k, () => sameKeyConcurrencyTest(transport, `flaky-${i}`, runSeed(o.seed, i), o.staggerMaxMs, target, settleVirtual), { epochMs: o.service ? serviceEpochMs(o.service.def) ?? 0 : 0 }));
      await k.run();
      const left = o.service ? await probeRejection() : undefined;
      if (left !== undefined) {
        throw new ServiceError(o.service!.def.name, `a request left a promise rejection unhandled (${describeThrow(left.reason)}), which ends a real Node process: the lab runs the service in this process on its virtual-time lane and cannot go on. Handle it (await the promise, or .catch it); retrysim check --service runs such a service with the crash modelled`);
      }
      virtualMs += k.now;
      perRun.push(task.done.value as TestRun);
    }
  } finally {
    if (o.service) disarmRejections();
    store?.close();
    sdb?.db.close();
  }
  return { ...summarize(perRun, Date.now() - t0), virtualMs, perRun, how: 'fake timers' };
}

/**
 * How the virtual-time side ran: the test function on the fake-timers
 * bridge against the service in process, or (a hosted app) each run's
 * scenario on the simulation's host.
 */
export type VirtualHow = 'fake timers' | 'simulation host';

/**
 * 2, for a hosted app: each run is the lab's scenario at that run's own
 * stagger (the wall-clock run's, from the same seed), on the simulation's
 * host with one random order of its steps (the run's seed). The test
 * function cannot drive an app in process on the bridge: an app's turn
 * spans real macrotask turns (its nextTicks and stream callbacks), and the
 * test's own code, resumed inside one, ran on the app's clock (its
 * setTimeout became the app's timer); the simulation's host gives the app
 * its turns one at a time, as check --app does.
 */
async function appOnVirtualTime(o: Resolved, service: NonNullable<Resolved['service']>): Promise<ApproachResult & { virtualMs: number; perRun: TestRun[] }> {
  const t0 = Date.now();
  let virtualMs = 0;
  const perRun: TestRun[] = [];
  const judged = new Set<Invariant>(runJudged(true));
  for (let i = 0; i < o.runs; i++) {
    const staggerMs = new Prng(runSeed(o.seed, i)).uniform(0, o.staggerMaxMs);
    // The wall-clock twin's run id: its key is its own, as on the one server process of the wall-clock lane.
    const r = await runScenario(labScenario(o, staggerMs, `flaky-${i}`), { choices: new RandomChoice(runSeed(o.seed, i)), service: service.def });
    virtualMs += r.result.lastEventMs;
    // The run's checks, as the other two lanes' runs judge them (progress is the simulation column's, after its recovery phase).
    const violations = r.violations.filter((v) => judged.has(v.invariant));
    perRun.push({ staggerMs, reports: r.reports.op1 ?? 0, failed: violations.length > 0, violations });
  }
  return { ...summarize(perRun, Date.now() - t0), virtualMs, perRun };
}

/** The scenario the simulation enumerates: the test with a fixed stagger. */
export function labScenario(o: Resolved, staggerMs: number, runId = 'flaky'): Scenario {
  return scenarioSchema.parse({
    format: 'retrysim.scenario/2',
    name: `flaky lab · ${o.service ? o.service.def.name : o.variant} · stagger ${staggerMs} ms`,
    description: o.service
      ? `Two workers send the same ${o.service.def.effects.noun ?? 'effect'}'s operation with the same key; the second starts staggerMs after the first.`
      : 'Two workers file the same report with the same key; the second starts staggerMs after the first.',
    seed: o.seed,
    service: o.service ? { module: o.service.module, ...serviceEpochField(o.service.def) } : { variant: o.variant },
    client: { keySource: 'tool_call', maxAttempts: 6 },
    faults: { slowMs: o.slowMs },
    operations: [{ id: 'op1', runId, ...(o.service ? serviceIntent(o.service.def.effects.noun, 1) : TRACKER_WORDS), workers: 2, staggerMs }],
    expect: {},
  });
}

// A server step's label: instance / operation.worker#request : step.
const SERVER_STEP = /^s\d+\/op1\.(w\d+)#(\d+):([A-Za-z0-9_.-]+)$/;
const TRACKER_STEPS: readonly string[] = ['check', 'claim', 'process', 'insert', 'register', 'finish', 'respond'];

/** The order in which the two workers' requests passed the server's steps (the built-in's, or a service's declared ones), e.g. "w0#1:check w1#2:check …". */
export function stepPattern(choices: readonly ChoiceRecord[], steps: readonly string[] = TRACKER_STEPS): string {
  const out: string[] = [];
  for (const c of choices) {
    const m = SERVER_STEP.exec(c.of[c.chosen] ?? '');
    if (m && steps.includes(m[3]!)) out.push(`${m[1]}#${m[2]}:${m[3]}`);
  }
  return out.join(' ');
}

/** 3. The simulation: every interleaving, for every stagger on a 1 ms grid in [0, staggerMaxMs). */
export async function runSimulated(o: Resolved): Promise<SimulatedResult> {
  const t0 = Date.now();
  const staggers: SimulatedResult['staggers'] = [];
  const patterns = new Map<string, { schedules: number; staggerMs: Set<number> }>();
  const byInvariant: Partial<Record<Invariant, number>> = {};
  const examples: Partial<Record<Invariant, string>> = {};
  const counts = new Set<number>();
  // A service or app is loaded once, and what its modules keep (an answer
  // cache in a Map at the top of a file) outlives each run, as it outlives
  // each wall-clock run on the one server process. There every run has its
  // own key; so has every schedule here, or a schedule met the answer an
  // earlier one left under the same key (a false exactly-one and id-exists
  // on a correct app).
  let runNo = 0;
  for (let d = 0; d < o.staggerMaxMs; d++) {
    let failing = 0;
    const e = await exploreAll((choices) => runScenario(labScenario(o, d, `flaky-${d}-${runNo++}`), { choices, ...(o.service ? { service: o.service.def } : {}) }), {
      schedulesMax: o.schedulesMax,
      keep: () => false,
      onSchedule: (x) => {
        // The campaign's verdicts on the run (runScenario judges it with the same checkers, recovery and progress included).
        const vs = x.result.violations;
        counts.add(x.result.reports.op1 ?? 0);
        if (vs.length === 0) return;
        failing++;
        for (const inv of new Set(vs.map((v) => v.invariant))) byInvariant[inv] = (byInvariant[inv] ?? 0) + 1;
        for (const v of vs) examples[v.invariant] ??= `stagger ${d} ms: ${v.detail}`;
        const p = stepPattern(x.result.result.choices, o.service ? o.service.def.steps : undefined) || '(no tie at a server step)';
        const entry = patterns.get(p) ?? { schedules: 0, staggerMs: new Set<number>() };
        entry.schedules++;
        entry.staggerMs.add(d);
        patterns.set(p, entry);
      },
    });
    staggers.push({ staggerMs: d, schedules: e.schedules, failing, complete: e.complete });
  }
  return { ...finishSimulated(staggers, patterns, Date.now() - t0), byInvariant, examples, judged: simulatedJudged(o.service?.def ?? builtinService(o.variant)), effectCounts: [...counts].sort((a, b) => a - b) };
}

function finishSimulated(
  staggers: SimulatedResult['staggers'],
  patterns: Map<string, { schedules: number; staggerMs: Set<number> }>,
  wallMs: number,
): Omit<SimulatedResult, 'byInvariant' | 'examples' | 'judged' | 'effectCounts'> {
  const failingPatterns = [...patterns.entries()]
    .map(([pattern, v]) => ({ pattern, schedules: v.schedules, staggerMs: [...v.staggerMs].sort((a, b) => a - b) }))
    .sort((a, b) => b.schedules - a.schedules);
  const failingStaggers = new Set(failingPatterns.flatMap((p) => p.staggerMs));
  return {
    staggers,
    schedules: staggers.reduce((n, s) => n + s.schedules, 0),
    failing: failingPatterns.reduce((n, p) => n + p.schedules, 0),
    complete: staggers.every((s) => s.complete),
    failingPatterns,
    predictedRate: staggers.length === 0 ? 0 : failingStaggers.size / staggers.length,
    wallMs,
  };
}

/** Runs all three approaches. */
export async function runFlakyLab(opts: FlakyOptions = {}): Promise<FlakyReport> {
  const o = withDefaults(opts);
  if (o.service) registerService(o.service.module, o.service.def);
  const simulated = await runSimulated(o);
  const virtualTime = await runVirtualTime(o);
  const wallClock = await runWallClock(o);
  const { service, ...rest } = o;
  const invariants = invariantRows(!!service, simulated, virtualTime.perRun, wallClock.perRun);
  const failed = invariants.some((r) => r.verdict === 'fails');
  const noun = service?.def.effects.noun ?? (service ? 'effect' : 'report');
  const vacuous = failed ? undefined : noEffectSides(noun, [
    { side: 'on the wall clock', what: 'runs', counts: wallClock.perRun.map((r) => r.reports) },
    { side: 'on virtual time', what: 'runs', counts: virtualTime.perRun.map((r) => r.reports) },
    { side: 'in the simulation', what: 'schedules', counts: simulated.schedules === 0 ? [] : simulated.effectCounts, total: simulated.schedules },
  ]);
  const verdict = failed ? 'fails' : vacuous !== undefined ? 'inconclusive' : 'holds';
  return {
    options: { ...rest, ...(service ? { service: { name: service.def.name, module: service.module } } : {}) }, wallClock, virtualTime, simulated,
    // One truth: with nothing made, no row says "holds" above a verdict that does not.
    invariants: vacuous === undefined ? invariants : invariants.map((r) => (r.verdict === 'holds' ? { ...r, verdict: 'inconclusive' as const } : r)),
    verdict,
    ...(vacuous !== undefined ? { inconclusive: vacuous } : {}),
  };
}

/**
 * The sides on which no run (no schedule) left a single effect, in one
 * sentence; undefined when every side that ran saw one. `counts`: the
 * effect count of each run (the simulation's: each count seen). Exported
 * for its test.
 */
export function noEffectSides(noun: string, sides: Array<{ side: string; what: string; counts: readonly number[]; total?: number }>): string | undefined {
  const never = sides.filter((x) => x.counts.length > 0 && x.counts.every((n) => n === 0));
  if (never.length === 0) return undefined;
  const each = never.map((x) => `${x.side} none of the ${x.total ?? x.counts.length} ${x.what} made any ${noun}`);
  return `${each.join('; ')} — a test in which nothing is made keeps every invariant vacuously`;
}

/**
 * The lab's verdict per invariant, from what each side counted. Every
 * invariant the service campaign judges is a row: the ones the lab's test
 * cannot reach (one tenant, no key-reuse probe) say so instead of a holds
 * they did not earn.
 */
export function invariantRows(service: boolean, simulated: Pick<SimulatedResult, 'byInvariant' | 'examples' | 'judged'>, virtual: readonly TestRun[], wall: readonly TestRun[]): InvariantRow[] {
  const onRuns = runJudged(service);
  const count = (runs: readonly TestRun[], inv: Invariant) => runs.filter((r) => r.violations.some((v) => v.invariant === inv)).length;
  const first = (runs: readonly TestRun[], inv: Invariant, side: string) => {
    for (const r of runs) {
      const v = r.violations.find((x) => x.invariant === inv);
      if (v) return `${side}, stagger ${r.staggerMs.toFixed(1)} ms: ${v.detail}`;
    }
    return undefined;
  };
  const seen = new Set<Invariant>([...simulated.judged, ...onRuns, ...(Object.keys(simulated.byInvariant) as Invariant[]), ...[...virtual, ...wall].flatMap((r) => r.violations.map((v) => v.invariant))]);
  const rows: InvariantRow[] = [...seen].map((inv) => {
    const judgedOnRuns = onRuns.includes(inv) || [...virtual, ...wall].some((r) => r.violations.some((v) => v.invariant === inv));
    const judgedSim = simulated.judged.includes(inv) || simulated.byInvariant[inv] !== undefined;
    const row = {
      invariant: inv,
      wallClock: judgedOnRuns ? count(wall, inv) : null,
      virtualTime: judgedOnRuns ? count(virtual, inv) : null,
      simulated: judgedSim ? (simulated.byInvariant[inv] ?? 0) : null,
    };
    const broken = (row.wallClock ?? 0) + (row.virtualTime ?? 0) + (row.simulated ?? 0) > 0;
    const example = simulated.examples[inv] ?? first(virtual, inv, 'virtual time') ?? first(wall, inv, 'wall clock');
    return { ...row, verdict: broken ? 'fails' as const : 'holds' as const, ...(example !== undefined ? { example } : {}) };
  });
  if (service && !seen.has('tenant-isolation')) rows.push({ invariant: 'tenant-isolation', notJudged: "the lab's test has one tenant (check --service judges it with two)", wallClock: null, virtualTime: null, simulated: null });
  if (service && !seen.has('key-reuse')) rows.push({ invariant: 'key-reuse', notJudged: "the lab's test sends one body per key (check --service probes a reused key)", wallClock: null, virtualTime: null, simulated: null });
  return rows;
}
