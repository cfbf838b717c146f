import fc from 'fast-check';
import { DURATION_MS_MAX, SCENARIO_FORMAT, type Scenario } from './schema.js';
import { builtinService, type BuiltinName } from '../tracker/builtin.js';
import type { KeySource } from '../harness/keys.js';

/** Fault kinds a generator may use; every knob defaults to "off". */
export type FaultKind =
  | 'loseResponse'
  | 'crash'
  | 'slow'
  | 'concurrency'
  | 'kill'
  | 'pause'
  | 'clockOffset'
  | 'instances'
  | 'loseAllAnswers'
  | 'modelNewId'
  | 'modelReword'
  /** Operations of two tenants whose runs, tool calls and keys coincide. */
  | 'tenants'
  /** Every operation files the same module and title (different runs): a business key that forgets the run id collides. */
  | 'sameTitles'
  /** The last operation sends the first one's key with its own body (one key, two bodies: the 422 path). */
  | 'keyReuse'
  /** A rate limiter answers the first 1–2 requests 429 with `Retry-After: 1–2` s (for retry clients: `network.throttle`). */
  | 'throttle'
  /**
   * A safe lease (lease > timeout + processing) whose processing outlasts half
   * of it, with a client timeout shorter than processing, so the client's own
   * retries arrive while its first request is live: an early take-over shows.
   */
  | 'leaseRace'
  /** A pause may end in a crash: the stale holder's clean-up runs after another request took the key over. */
  | 'crashTakeover'
  /** User services: after a success, the same key once more with a different body (it must be refused: invariant key-reuse). */
  | 'keyReuseProbe'
  /**
   * Something in front of the service answers the first 1–2 requests with a
   * status retrying cannot help (400, 401, 403, 404, 422) or can (408, 409,
   * 429, 503): `network.answer`. For retry clients (the `non-retryable` check).
   */
  | 'answer'
  /**
   * Spans of minutes to hours, log-uniform: a pause of 10 s–10 min with a
   * client timeout of the same order (the retry lands minutes after the
   * first commit), an uncapped exponential backoff with a long deadline, or
   * two instances whose clocks disagree by 10 s–6 h. Reaches key TTLs,
   * lease lengths and "recent" windows that the default ~10 s never does.
   */
  | 'longSpans'
  /** One operation may run three workers at once (same key): races that two concurrent requests cannot reach. */
  | 'threeWorkers'
  /**
   * Retry clients: two operations whose bodies differ only in the
   * operation's id (the same item bought twice). A key made from the content
   * without the id — a hash of the body's other fields — gives both one key
   * (`key-reuse`); with every title different, no run ever showed it.
   */
  | 'sameContent'
  /**
   * Retry clients: two operations that start in the same millisecond (two
   * orders placed at once). A key made from the clock — `order-${Date.now()}`,
   * a time-ordered id truncated to the millisecond — gives both one key
   * (`key-reuse`); with each start drawn apart in 0–300 ms, a campaign
   * rarely drew two equal ones and such a client held.
   */
  | 'sameInstant';

/** A user service to generate scenarios for (instead of a built-in variant): its module and declared points. */
export interface GenService {
  module: string;
  steps: readonly string[];
  crashPoints: readonly string[];
  /**
   * What one effect of the service is called (`effects.noun`, default
   * `effect`): its operations are about that, in its own words — module
   * `<noun>`, title `<noun> <n>` — never the built-in tracker's bug reports.
   * Not the service's name: one service written two ways (an app and a
   * ServiceDefinition) gets the same operations.
   */
  noun?: string;
  /** The wall-clock instant of virtual time 0 its files record (`service.epochMs`); absent: none written (epoch 0). */
  epochMs?: number;
}

/** A user service's operation `n` (per tenant), in its own words: what its body builds its request from. */
export function serviceIntent(noun: string | undefined, n: number): { module: string; title: string; steps: string } {
  return { module: noun ?? 'effect', title: `${noun ?? 'effect'} ${n}`, steps: '' };
}

/** What to generate. */
export interface ScenarioGenOptions {
  /** A built-in variant; ignored when `service` is given. */
  variant: BuiltinName;
  /** A user service: its steps and crash points are where pauses, slowness, kills and crashes strike. */
  service?: GenService;
  keySource: KeySource;
  /** Which faults may appear. */
  faults: readonly FaultKind[];
  /** Logical operations per scenario (1..opsMax). Default 2. */
  opsMax?: number;
  /** Workers per operation when `concurrency` is on (1..workersMax). Default 2. */
  workersMax?: number;
  /** Length limit of the generated choice list. Default 40. */
  choicesMax?: number;
}

/** A generated case: the scenario and the choice list that drives its schedule. */
export interface GeneratedCase {
  scenario: Scenario;
  choices: number[];
}

/** Worker start offsets: exactly together, within a round trip, or anywhere up to 3 s; shrinks toward 0. */
const nearCoincident: fc.Arbitrary<number> = fc.oneof(
  { arbitrary: fc.constant(0), weight: 5 },
  { arbitrary: fc.nat({ max: 4 }), weight: 2 },
  { arbitrary: fc.nat({ max: 3000 }), weight: 1 },
);

/** Log-uniform integer in [lo, hi]: as many draws between 10 s and 100 s as between 10 min and 100 min; shrinks toward lo. */
function logUniform(lo: number, hi: number): fc.Arbitrary<number> {
  return fc.double({ min: 0, max: 1, noNaN: true }).map((u) => Math.round(lo * (hi / lo) ** u));
}

/** The virtual time a generated main run may plan for (the kernel stops at one hour: src/service/run.ts timeMsMax). */
const RUN_SPAN_MS = 2_700_000;
/** Clock disagreement the long-spans fault reaches: 6 hours. */
const SKEW_LONG_MS = 6 * 3_600_000;

/** A nat that shrinks to 0 ("off") and is 0 unless the fault kind is enabled. */
/** Which reach of a step a fault strikes: the first in about 4 of 5 cases, else the 1st–4th (shrinking toward the 1st). */
const reachArb: fc.Arbitrary<number> = fc.oneof({ arbitrary: fc.constant(1), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: 4 }), weight: 1 });
const FIRST_REACHES = { crash: 1, pause: 1, kill: 1 } as const;

function knob(enabled: boolean, max: number): fc.Arbitrary<number> {
  return enabled ? fc.nat({ max }) : fc.constant(0);
}

function maybe<T>(enabled: boolean, arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return enabled ? fc.option(arb, { nil: undefined, freq: 2 }) : fc.constant(undefined);
}

/**
 * fast-check arbitrary for whole scenarios. Every dimension shrinks toward
 * the simplest case together: fewer operations and workers, no faults,
 * shorter delays, one instance, an empty (default-ordered) schedule — so a
 * failure shrinks to the smallest scenario that still fails.
 *
 * Timing is generated so that lease/timeout mistakes are reachable: leases
 * may be shorter than the client timeout plus processing
 * (`allowUnsafeLease`), pauses may outlast the lease, and clocks may be skewed.
 *
 * @example
 * fc.assert(fc.asyncProperty(scenarioArbitrary({ variant: 'key_atomic', keySource: 'tool_call', faults: ['loseResponse'] }),
 *   async ({ scenario, choices }) => (await runScenario(scenario, { choices: new ListChoice(choices) })).violations.length === 0));
 */
export function scenarioArbitrary(o: ScenarioGenOptions): fc.Arbitrary<GeneratedCase> {
  const has = (k: FaultKind) => o.faults.includes(k);
  const steps = o.service ? o.service.steps : builtinService(o.variant).steps;
  const crashPoints = o.service?.crashPoints ?? [];
  // Where a request stalls while it holds its key: the built-in's processing step.
  const processing = o.service ? steps[0]! : builtinService(o.variant).slowStep ?? steps[0]!;
  // An array (not a chained count) so fast-check shrinks by dropping operations.
  const ops = fc.array(
    fc.record({
      // Concurrency means several workers on one operation (one key) most of
      // the time; the minimiser still drops a worker that is not needed.
      workers: has('concurrency') ? fc.oneof({ arbitrary: fc.constant(Math.min(2, o.workersMax ?? 2)), weight: 3 }, { arbitrary: fc.integer({ min: 1, max: o.workersMax ?? 2 }), weight: 1 }) : fc.constant(1),
      startMs: fc.nat({ max: 300 }),
      // Same-key requests only race when they are inside each other's
      // window (a round trip is a few ms), so most of the weight sits on
      // near-coincident starts; the long tail still reaches "the second
      // worker arrives while the first is slow or paused".
      staggerMs: has('concurrency') ? nearCoincident : fc.constant(0),
      // Shrinks toward the default tenant.
      tenant: has('tenants') ? fc.constantFrom('default', 'globex') : fc.constant('default'),
    }),
    { minLength: 1, maxLength: o.opsMax ?? 2 },
  ).map((xs) => {
    // Runs are numbered per tenant, so two tenants' first runs are both
    // `run-1` with the same title and tool-call ids: the same raw keys.
    const perTenant = new Map<string, number>();
    return xs.map(({ tenant, ...x }, i) => {
      const n = (perTenant.get(tenant) ?? 0) + 1;
      perTenant.set(tenant, n);
      // Keys in the schema's order (see the map below: no parse on this path). A built-in
      // variant files bug reports; a user's service gets an operation in its own words.
      const intent = o.service ? serviceIntent(o.service.noun, n) : { module: 'checkout', title: `Bug ${n}: pay fails`, steps: 'press Pay' };
      return { id: `op${i + 1}`, runId: `run-${n}`, ...intent, ...(tenant === 'default' ? {} : { tenant }), workers: x.workers, startMs: x.startMs, staggerMs: x.staggerMs };
    });
  });
  const sameTitles = has('sameTitles') ? fc.boolean() : fc.constant(false);
  const keyReuse = has('keyReuse') ? fc.boolean() : fc.constant(false);
  // [lease, timeout as a fraction of processing, processing as a point between lease/2 and lease − timeout].
  const leaseRace = has('leaseRace')
    ? fc.option(fc.record({ leaseMs: fc.integer({ min: 400, max: 6000 }), timeoutPart: fc.double({ min: 0.05, max: 0.45, noNaN: true }), at: fc.double({ min: 0.1, max: 0.9, noNaN: true }) }), { nil: undefined, freq: 2 })
    : fc.constant(undefined);
  const instances = has('instances') ? fc.integer({ min: 1, max: 2 }) : fc.constant(1);
  return fc.record({
    seed: fc.nat({ max: 1_000_000 }),
    ops,
    instances,
    clockOffsetMs: has('clockOffset') ? fc.array(fc.integer({ min: -3000, max: 3000 }), { maxLength: 2 }) : fc.constant([] as number[]),
    leaseMs: fc.integer({ min: 100, max: 8000 }),
    timeoutMs: fc.integer({ min: 100, max: 3000 }),
    maxAttempts: fc.integer({ min: 1, max: 5 }),
    latencyMeanMs: fc.integer({ min: 1, max: 30 }),
    // A fixed latency (sd 0) is common: then same-time sends arrive together
    // and only the schedule decides their order, which is where races live.
    latencySdMs: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, { arbitrary: fc.nat({ max: 10 }), weight: 1 }),
    loseResponses: knob(has('loseAllAnswers'), 6),
    loseResponseAfterCommit: knob(has('loseResponse'), 2),
    crashMidRequest: knob(has('crash'), 2),
    slowMs: knob(has('slow'), 3000),
    pause: maybe(has('pause'), fc.record({ atStep: fc.constantFrom(...steps), ms: fc.integer({ min: 1, max: 12_000 }), count: fc.constant(1) })),
    // [lease, client timeout as a fraction of it, the stall in leases]: the stalled first request outlives its lease, a retry takes over, and the stale request crashes afterwards.
    pauseCrash: has('crashTakeover')
      ? fc.option(fc.record({ leaseMs: fc.integer({ min: 100, max: 2000 }), timeoutPart: fc.double({ min: 0.3, max: 0.6, noNaN: true }), leases: fc.double({ min: 1.2, max: 4, noNaN: true }), late: fc.double({ min: 1.1, max: 3, noNaN: true }) }), { nil: undefined, freq: 2 })
      : fc.constant(undefined),
    kill: maybe(has('kill'), fc.record({
      atStep: fc.constantFrom(...steps),
      restartAfterMs: fc.nat({ max: 3000 }),
    })),
    resubmits: has('modelNewId') || has('modelReword') ? fc.integer({ min: 0, max: 1 }) : fc.constant(0),
    // User services only: which declared crash point and step the crash and slow faults strike.
    crashAt: o.service && crashPoints.length > 0 ? fc.constantFrom(...crashPoints) : fc.constant(undefined),
    slowAtStep: o.service ? fc.constantFrom(...steps) : fc.constant(undefined),
    keyReuseProbe: has('keyReuseProbe') ? fc.boolean() : fc.constant(false),
    choices: fc.array(fc.nat({ max: 7 }), { maxLength: o.choicesMax ?? 40 }),
    extra: fc.record({ sameTitles, keyReuse, leaseRace }),
    // Last, and a constant when off: generators without it draw exactly what they drew before it existed.
    throttle: maybe(has('throttle'), fc.record({ count: fc.integer({ min: 1, max: 2 }), retryAfterS: fc.integer({ min: 1, max: 2 }) })),
    // Each newer dimension after it, each a constant when off (the same reason).
    answer: maybe(has('answer'), fc.record({ status: fc.constantFrom(400, 401, 403, 404, 422, 408, 409, 429, 503), count: fc.integer({ min: 1, max: 2 }) })),
    long: has('longSpans')
      ? fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 1 },
        { arbitrary: fc.record({ kind: fc.constantFrom('pause' as const, 'skew' as const, 'wait' as const), ms: logUniform(10_000, SKEW_LONG_MS), part: fc.double({ min: 0.1, max: 1.5, noNaN: true }), step: fc.nat({ max: 15 }), behind: fc.boolean() }), weight: 1 },
      )
      : fc.constant(undefined),
    // Which operation (index modulo their count) runs three workers; most cases keep the concurrency dimension's one or two.
    three: has('threeWorkers') ? fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary: fc.nat({ max: 15 }), weight: 1 }) : fc.constant(undefined),
    // User services only, when no kill at a step was drawn: a kill as the
    // instance's n-th answer leaves (the work done, the answer never sent,
    // the process back without its memory) — the restart that finds an
    // in-process cache of answers, which a kill at a step never reaches when
    // the cache's hit path has none. Last, and a constant for the built-in
    // claims: their cases are drawn exactly as before it existed.
    killAtAnswer: o.service && has('kill') ? maybe(true, fc.record({ atAnswer: fc.integer({ min: 1, max: 3 }), restartAfterMs: fc.nat({ max: 3000 }) })) : fc.constant(undefined),
    // User services only: which reach of its step the crash, pause and kill
    // strike. A hosted app uses one store command several times per request
    // (`kv.set` for the claim, the effect, the stored answer); striking only
    // the first use never loses the answer of the last one, after the effect
    // (an app that frees the key on that error made a second effect, and
    // "held"). Mostly the first reach (it shrinks there); last, and a
    // constant for the built-in claims, which draw exactly as before.
    nth: o.service && (has('crash') || has('pause') || has('kill')) ? fc.record({ crash: reachArb, pause: reachArb, kill: reachArb }) : fc.constant(undefined),
    // User services only: which reach of its step the slow fault delays (a
    // hosted app's second `kv.set`, the effect after the claim: a lock
    // shorter than the slow effect expires under it only there). Last, and a
    // constant for the built-in claims, which draw exactly as before; every
    // earlier field of a user service's case is drawn as before too.
    slowNth: o.service && has('slow') ? reachArb : fc.constant(1),
    // Retry clients only: every operation with the same content (its id apart). Last, and a constant when
    // off: every other campaign draws exactly as before, and a client's case draws every earlier field as before.
    sameContent: has('sameContent') ? fc.boolean() : fc.constant(false),
    // Retry clients only: every operation starts when the first does. Last, and a constant when off (the same reason).
    sameInstant: has('sameInstant') ? fc.boolean() : fc.constant(false),
  }).map((g) => {
    const { sameTitles: same, keyReuse: reuse, leaseRace: race } = g.extra;
    const nth = g.nth ?? FIRST_REACHES;
    let ops = g.ops;
    // With one operation there is nothing to collide with: its case stays as drawn.
    if (same || (g.sameContent && ops.length >= 2)) ops = ops.map((op) => ({ ...op, title: o.service ? o.service.noun ?? 'effect' : 'Bug: pay fails' }));
    if (g.sameInstant && ops.length >= 2) ops = ops.map((op) => ({ ...op, startMs: ops[0]!.startMs }));
    if (reuse && ops.length >= 2) ops = ops.map((op, i) => (i === ops.length - 1 ? withKeyFrom(op, ops[0]!.id) : op));
    let { leaseMs, timeoutMs, slowMs, maxAttempts } = g;
    let pause = g.pause;
    if (g.pauseCrash) {
      leaseMs = g.pauseCrash.leaseMs;
      timeoutMs = Math.max(1, Math.floor(g.pauseCrash.timeoutPart * leaseMs));
      pause = { atStep: processing, ms: Math.round(g.pauseCrash.leases * leaseMs), count: 1 };
      // Enough quick retries to reach past the lease while the first request stalls.
      maxAttempts = 5;
      slowMs = 0;
      // A second worker of the first operation arrives after the stale request's crash: whatever that crash freed, it claims.
      const late = Math.round(g.pauseCrash.late * pause.ms);
      ops = ops.map((op, i) => (i === 0 ? { ...op, workers: 2, staggerMs: late } : op));
    }
    if (race) {
      // lease/2 < slow < lease − timeout, timeout < slow: safe by SPEC §3's rule, yet only a full lease keeps the first request alive.
      leaseMs = race.leaseMs;
      const lo = leaseMs / 2 + 1;
      timeoutMs = Math.max(1, Math.floor(race.timeoutPart * lo));
      const hi = leaseMs - timeoutMs - 1;
      slowMs = Math.round(lo + race.at * (hi - lo));
    }
    if (g.three !== undefined) {
      const at = g.three % ops.length;
      ops = ops.map((op, i) => (i === at ? { ...op, workers: 3 } : op));
    }
    let instances = g.instances;
    let clockOffsetMs = g.clockOffsetMs.slice(0, g.instances);
    let policy = 'bug-report-harness';
    let deadlineMs: number | undefined;
    if (g.long !== undefined) {
      const L = g.long;
      if (L.kind === 'pause' && !g.pauseCrash) {
        // A stall of minutes, and a client patient for about as long: its retry lands long after the first commit.
        const ms = Math.min(L.ms, DURATION_MS_MAX);
        pause = { atStep: steps[L.step % steps.length]!, ms, count: 1 };
        timeoutMs = Math.max(100, Math.min(DURATION_MS_MAX, Math.round(L.part * ms), Math.floor((RUN_SPAN_MS - ms) / maxAttempts)));
      } else if (L.kind === 'skew' && has('instances') && has('clockOffset')) {
        // Two instances whose clocks disagree by minutes to hours (an NTP step, a VM resumed from a snapshot).
        // Only when both dimensions are in the fault space: `--faults` without `instances` (a
        // single-process service) must not be shown a two-instance counterexample.
        instances = 2;
        clockOffsetMs = [0, L.behind ? -L.ms : L.ms];
      } else if (L.kind === 'wait') {
        // Uncapped exponential backoff (the Codex sampling layer: attempt 10 waits ~100 s) within a deadline of minutes.
        policy = 'codex-sampling';
        maxAttempts = 12;
        deadlineMs = Math.min(L.ms, DURATION_MS_MAX);
      }
    }
    // Built complete — every default filled in, keys in the schema's order —
    // instead of through scenarioSchema.parse: parsing cost ~15 % of a
    // campaign's generation time on every run. arbitraries.test.ts holds this
    // object equal, byte for byte as JSON, to what the parse would return.
    const scenario: Scenario = {
      format: SCENARIO_FORMAT,
      name: `generated ${o.service ? o.service.module : o.variant}/${o.keySource}`,
      description: '',
      seed: g.seed,
      // As for a built-in, the faults may outgrow a lease on purpose: a service that takes the file's
      // lease (ServiceDefinition.deploy) is judged on the deployment, not refused (progress excuses a
      // leased service's mis-configured deployment).
      service: o.service
        ? { module: o.service.module, instances, leaseMs: 5000, allowUnsafeLease: true, clockOffsetMs, ...(o.service.epochMs !== undefined ? { epochMs: o.service.epochMs } : {}) }
        : {
          variant: o.variant,
          instances,
          leaseMs,
          allowUnsafeLease: true,
          clockOffsetMs,
        },
      client: {
        keySource: o.keySource,
        policy,
        maxAttempts,
        timeoutMs,
        ...(deadlineMs !== undefined ? { deadlineMs } : {}),
        model: { resubmits: g.resubmits, reword: has('modelReword') && g.resubmits > 0 },
        ...(g.keyReuseProbe ? { keyReuseProbe: true } : {}),
      },
      network: { latencyMeanMs: g.latencyMeanMs, latencySdMs: g.latencySdMs, loseResponses: g.loseResponses, ...(g.throttle ? { throttle: g.throttle } : {}), ...(g.answer ? { answer: g.answer } : {}) },
      faults: {
        loseResponseAfterCommit: g.loseResponseAfterCommit,
        crashMidRequest: g.crashMidRequest,
        slowMs,
        ...(pause ? { pause: g.pauseCrash ? { ...pause, thenCrash: true } : pause === g.pause && nth.pause > 1 ? { ...pause, nth: nth.pause } : { ...pause } } : {}),
        ...(g.crashAt !== undefined && g.crashMidRequest > 0 ? { crashAt: g.crashAt, ...(nth.crash > 1 ? { crashAtNth: nth.crash } : {}) } : {}),
        ...(g.slowAtStep !== undefined && g.slowMs > 0 ? { slowAtStep: g.slowAtStep, ...(g.slowNth > 1 && slowMs > 0 ? { slowAtStepNth: g.slowNth } : {}) } : {}),
        ...(g.kill ? { kill: { instance: 0, atStep: g.kill.atStep, ...(nth.kill > 1 ? { nth: nth.kill } : {}), restartAfterMs: g.kill.restartAfterMs } } : g.killAtAnswer ? { kill: { instance: 0, ...g.killAtAnswer } } : {}),
      },
      operations: ops,
      schedule: [],
      expect: { violations: [] },
    };
    return { scenario, choices: g.choices };
  });
}

/** `n` and the word, plural unless n is 1: `1 worker`, `2 workers`. */
export function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * A counterexample's size as every table and message prints it:
 * `1 op, 2 workers, 1 fault, 3 attempts, 1 preemption` (and the instances
 * when more than one). `unit` names what was sent: a harness client's
 * attempts, a user's client's requests.
 */
export function sizeText(s: Pick<ReturnType<typeof scenarioSize>, 'operations' | 'workers' | 'faults' | 'attempts' | 'preemptions' | 'instances'>, unit = 'attempt'): string {
  return `${count(s.operations, 'op')}, ${count(s.workers, 'worker')}, ${count(s.faults, 'fault')}, ${count(s.attempts, unit)}, ${count(s.preemptions, 'preemption')}${s.instances > 1 ? `, ${s.instances} instances` : ''}`;
}

/** How big a scenario is, for asserting that a shrunk counterexample is minimal. */
export function scenarioSize(s: Scenario, attempts: number): {
  operations: number;
  workers: number;
  faults: number;
  instances: number;
  attempts: number;
  /** Decisions of the recorded schedule that switched away from a task that could continue. */
  preemptions: number;
  /**
   * Decisions recorded in the schedule: every point where the kernel had
   * more than one task to run — what `replay` counts ("16 decisions"), the
   * stepper page too, and the file's `schedule` lists.
   */
  decisions: number;
  /** Of those, the ones that did not take the default (the running task going on): preemptions plus free choices. */
  nonDefault: number;
} {
  const f = s.faults;
  return {
    preemptions: s.schedule.filter((c) => c.preempted).length,
    decisions: s.schedule.length,
    nonDefault: s.schedule.filter((c) => c.chosen !== 0).length,
    operations: s.operations.length,
    workers: s.operations.reduce((n, o) => n + o.workers, 0),
    faults: f.loseResponseAfterCommit + f.crashMidRequest + (f.slowMs > 0 ? 1 : 0) + (f.pause ? (f.pause.thenCrash ? 2 : 1) : 0) + (f.kill ? 1 : 0) +
      s.network.loseResponses + s.client.model.resubmits + (s.client.keyReuseProbe ? 1 : 0) + (s.network.throttle?.count ?? 0) + (s.network.answer?.count ?? 0),
    instances: s.service.instances,
    attempts,
  };
}

/** An operation that sends another operation's key (keyFrom sits between tenant and workers in the schema). */
function withKeyFrom<T extends { id: string; runId: string; module: string; title: string; steps: string; tenant?: string; workers: number; startMs: number; staggerMs: number }>(op: T, keyFrom: string): T & { keyFrom: string } {
  const { workers, startMs, staggerMs, ...head } = op;
  return { ...head, keyFrom, workers, startMs, staggerMs } as T & { keyFrom: string };
}
