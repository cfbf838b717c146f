import { z } from 'zod';
import { BUILTIN_SERVICES } from '../tracker/builtin.js';
import { KEY_SOURCES, type KeySource } from '../harness/keys.js';
import { NAMED_POLICIES } from '../backoff/policies.js';

/**
 * The one format version this build reads and writes. Version 2 changed what
 * a decision's `chosen` means: candidate 0 is the task that just ran (when it
 * can continue), so 0 is "no preemption"; every decision also records
 * `preempted`. `retrysim migrate` rewrites version-1 files.
 */
export const SCENARIO_FORMAT = 'retrysim.scenario/2';

const ms = z.number().finite().nonnegative();
const count = z.number().int().nonnegative();
/** Which reach of a step or crash point a fault strikes (1-based). */
const nthOf = z.number().int().min(1).max(16);
/**
 * A duration a scenario sets: at most 10 minutes. A run must end within the
 * kernel's one virtual hour (timeMsMax); one value past it could never run,
 * and the few that add up (attempts × timeout, workers × stagger) are caught
 * as a "did not finish" verdict instead.
 */
export const DURATION_MS_MAX = 600_000;
const duration = ms.max(DURATION_MS_MAX, `at most ${DURATION_MS_MAX} ms (10 minutes); a run must end within one virtual hour`);

/**
 * The latest epoch a file may name: 9999-12-30, so a run's hour and a day of
 * clock skew stay within the years SQLite's date functions and ISO 8601's
 * four digits cover.
 */
const EPOCH_MS_MAX = 253_402_128_000_000;
const epochMs = z.number({ error: (i) => `expected a whole number of ms since 1970-01-01 UTC (1767225600000 is 2026-01-01), got ${i.input === undefined ? 'nothing' : JSON.stringify(i.input)}` })
  .min(0, { error: 'expected an instant at or after 1970-01-01 UTC (0 ms), got a negative one', abort: true })
  .max(EPOCH_MS_MAX, { error: `expected an instant at most ${EPOCH_MS_MAX} ms (9999-12-30 UTC)`, abort: true })
  .int('expected a whole number of ms since 1970-01-01 UTC (1767225600000 is 2026-01-01), got a fraction');

/** A decision of the recorded schedule (see ChoiceRecord). */
const choiceRecord = z.strictObject({
  t: ms,
  chosen: count,
  of: z.array(z.string()).min(2),
  /** True when `chosen` switched away from `of[0]`, the task that could have continued. */
  preempted: z.boolean(),
}).refine((c) => c.chosen < c.of.length, { message: 'chosen must index into of' })
  .refine((c) => !c.preempted || c.chosen !== 0, { message: 'a decision that chose candidate 0 (continue) cannot be a preemption' });

const operation = z.strictObject({
  /** Name used in `expect.reports` and in the trace. */
  id: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/, 'ids are 1–32 letters, digits, _ or -'),
  /** Unique per tenant: the checkers find an operation's reports by (tenant, run_id). */
  runId: z.string().min(1).max(200),
  module: z.string().min(1).max(200),
  title: z.string().min(1).max(500),
  steps: z.string().max(2000).default(''),
  tenant: z.string().min(1).max(64).optional(),
  /**
   * Send the Idempotency-Key of this other operation (its run and tool calls)
   * instead of this one's own: a client bug that sends one key with two
   * different bodies. The service must answer 422.
   */
  keyFrom: z.string().regex(/^[A-Za-z0-9_-]{1,32}$/).optional(),
  /** Workers that run this same operation at once (same tool call). */
  workers: z.number().int().min(1).max(8).default(1),
  /** When the first worker starts. */
  startMs: duration.default(0),
  /** Worker w starts at startMs + w × staggerMs. */
  staggerMs: duration.default(0),
});

const kill = z.strictObject({
  instance: count.default(0),
  /** Kill at this virtual time... */
  atMs: duration.optional(),
  /** ...or when a request of that instance first reaches this step (e.g. `process`)... */
  atStep: z.string().min(1).optional(),
  /**
   * ...or when that instance's n-th handler (1-based) has returned, before
   * its answer leaves: the work is done, the client sees the connection
   * close, and the process restarts without its in-process memory.
   */
  atAnswer: z.number().int().positive().optional(),
  /**
   * With `atStep`: the kill lands the n-th time a request of that instance
   * reaches the step (1-based; absent: the first). A step an app or service
   * reaches several times per request (a store's `kv.set` for the claim, the
   * effect and the stored answer) is struck at its later uses too.
   */
  nth: nthOf.optional(),
  restartAfterMs: duration.default(500),
}).refine((k) => [k.atMs, k.atStep, k.atAnswer].filter((x) => x !== undefined).length === 1, { message: 'kill needs exactly one of atMs, atStep or atAnswer' })
  .refine((k) => k.nth === undefined || k.atStep !== undefined, { message: 'kill.nth counts the reaches of kill.atStep: it needs atStep', path: ['nth'] });

/** How a hosted app's modules (or a retry client's module) are loaded for a run: once for all its simulated processes, or once per process. */
export const MODULE_LOADS = ['once', 'per-process'] as const;
export type ModuleLoads = (typeof MODULE_LOADS)[number];

/** The scenario file: everything needed to reproduce one run exactly. */
export const scenarioSchema = z.strictObject({
  format: z.literal(SCENARIO_FORMAT),
  name: z.string().min(1),
  /** In a sentence: what this scenario shows (for a regression: what broke). */
  description: z.string().default(''),
  seed: z.number().int().refine(Number.isSafeInteger, 'seed must be a safe integer'),
  service: z.strictObject({
    /** A built-in tracker variant... */
    variant: z.enum(BUILTIN_SERVICES as [string, ...string[]]).optional(),
    /** ...or a user's service module (path as given to `--service`), loaded through the service API. */
    module: z.string().min(1).optional(),
    instances: z.number().int().min(1).max(8).default(1),
    leaseMs: ms.max(3_600_000).default(5000),
    /** Build a deliberately unsafe lease (scenario 6). */
    allowUnsafeLease: z.boolean().default(false),
    completedTtlMs: ms.max(86_400_000).optional(),
    /** Per-instance clock skew, ms (index = instance). */
    clockOffsetMs: z.array(z.number().min(-86_400_000).max(86_400_000)).max(8).default([]),
    /**
     * The wall-clock instant of virtual time 0, ms since 1970-01-01 UTC:
     * what the service's `Date.now()`, `sim.now()` and SQLite's `'now'`
     * read at the run's start (plus the instance's skew). Files found for a
     * user's service since 2026-12 carry 1767225600000 (2026-01-01); absent,
     * 0 — the 1970 clock every file found before it ran on, so it replays
     * as found.
     */
    epochMs: epochMs.optional(),
    /**
     * A hosted app (`--app`): how its modules were loaded when the file was
     * found. `per-process`: afresh for each simulated process (each
     * instance, and again after a restart), as separate Node processes load
     * them, so what the app keeps at module level is each process's own
     * (src/app/per-process.ts); `retrysim replay` loads them so. Absent:
     * `once` for the whole run, as every file found before it was run.
     */
    moduleLoads: z.enum(MODULE_LOADS, { error: (i) => `expected 'once' (the app's modules loaded once for the run) or 'per-process' (once per simulated process), got ${JSON.stringify(i.input)}` }).optional(),
  }).refine((v) => (v.variant === undefined) !== (v.module === undefined), { message: 'service needs exactly one of variant (built-in) or module (a user service)' })
    .refine((v) => v.moduleLoads === undefined || v.module !== undefined, { message: 'service.moduleLoads says how a hosted app\'s modules load; a built-in variant has none', path: ['moduleLoads'] }),
  client: z.strictObject({
    keySource: z.enum(KEY_SOURCES as [KeySource, ...KeySource[]]),
    policy: z.string().refine((p) => p in NAMED_POLICIES, { message: `policy must be one of ${Object.keys(NAMED_POLICIES).join(', ')}` }).default('bug-report-harness'),
    maxAttempts: z.number().int().min(1).max(20).default(4),
    timeoutMs: duration.default(2000),
    /** The tool call's deadline from its first attempt (no further attempt unless 50 ms would be left); absent: none. */
    deadlineMs: duration.optional(),
    model: z.strictObject({
      resubmits: z.number().int().min(0).max(5).default(0),
      reword: z.boolean().default(false),
    }).default({ resubmits: 0, reword: false }),
    /** After a success, send the same key once more with a different body: it must be refused without effect. */
    keyReuseProbe: z.boolean().optional(),
    /**
     * A user's own retry client runs the operations instead of the built-in
     * harness (whose knobs above then do not apply): the module it was found
     * with (`retrysim replay --client PATH` names or overrides it)...
     */
    module: z.string().min(1).optional(),
    /** ...and which of its exported clients, by its `name`. */
    name: z.string().min(1).max(200).optional(),
    /**
     * A user's retry client: how its module was loaded when the file was
     * found. `per-process`: afresh for each simulated client call (each
     * worker), as separate client processes load it, so what the client
     * keeps at module level (a counter its keys come from, a breaker) is
     * each one's own; `retrysim replay` loads it so. Absent: `once` for the
     * whole run, as every file found before it was run.
     */
    moduleLoads: z.enum(MODULE_LOADS, { error: (i) => `expected 'once' (the client's module loaded once for the run) or 'per-process' (once per simulated client process), got ${JSON.stringify(i.input)}` }).optional(),
    /**
     * A user's retry client: the wall-clock instant of virtual time 0, ms
     * since 1970-01-01 UTC — what the client's `Date.now()` and `new Date()`
     * read at the run's start, its module's top level included (its
     * `performance.now()` and `process.hrtime` count from the start, as on a
     * real machine). Files found since 2026-12 carry 1767225600000
     * (2026-01-01), as `service.epochMs` does for a service; absent, 0 — the
     * 1970 clock every file found before it ran on, so it replays as found.
     * The built-in harness reads no wall clock: it ignores it.
     */
    epochMs: epochMs.optional(),
  }).refine((c) => c.moduleLoads === undefined || c.module !== undefined, { message: 'client.moduleLoads says how a retry client\'s module loads; this file names no client module (client.module)', path: ['moduleLoads'] }),
  network: z.strictObject({
    /** One-way latency |N(mean, sd)| per message, ms. */
    latencyMeanMs: ms.max(60_000).default(1),
    latencySdMs: ms.max(60_000).default(0),
    /** Lose the next N responses on the way back (any response, replays too). */
    loseResponses: count.max(1000).default(0),
    /**
     * Answer the next `count` requests that reach a live server with
     * `429 Too Many Requests` and `Retry-After: retryAfterS` (seconds),
     * before the service's handler sees them (a rate-limiting gateway).
     * Absent: never (files from before it read as they always did).
     */
    throttle: z.strictObject({ count: count.min(1).max(1000), retryAfterS: z.number().int().min(0).max(600) }).optional(),
    /**
     * Answer the next `count` requests that reach a live server (after the
     * throttle) with `status`, before the service's handler sees them: a
     * gateway, auth proxy or overloaded front end answering 400/401/403/404/422
     * (retrying cannot help) or 408/409/429/503 (it can). Absent: never.
     */
    answer: z.strictObject({ status: z.number().int().min(400).max(599), count: count.min(1).max(1000) }).optional(),
  }).default({ latencyMeanMs: 1, latencySdMs: 0, loseResponses: 0 }),
  faults: z.strictObject({
    loseResponseAfterCommit: count.max(1000).default(0),
    crashMidRequest: count.max(1000).default(0),
    slowMs: duration.default(0),
    /** `thenCrash`: the stalled request crashes at the crash point when it resumes. */
    /** `nth`: a request stalls the n-th time it reaches `atStep` (1-based; absent: the first). */
    pause: z.strictObject({ atStep: z.string().min(1), ms: duration, count: count.max(1000).default(1), thenCrash: z.boolean().optional(), nth: nthOf.optional() }).optional(),
    /** User services: the crash point the crashMidRequest counter fires at (default: the first one reached). */
    crashAt: z.string().min(1).optional(),
    /**
     * With `crashAt`: the crash fires the n-th time one request reaches that
     * crash point (1-based; absent: the first) — an app's third `kv.set`
     * (the stored answer, after the effect) rather than its first (the claim).
     */
    crashAtNth: nthOf.optional(),
    /** User services: the step after which slowMs applies (default: the service's first step). */
    slowAtStep: z.string().min(1).optional(),
    /**
     * With `slowAtStep`: the slow fault delays a request the n-th time it
     * reaches that step (1-based; absent: the first) — an app's second
     * `kv.set` (the effect, after the claim) rather than its first.
     */
    slowAtStepNth: nthOf.optional(),
    kill: kill.optional(),
  }).default({ loseResponseAfterCommit: 0, crashMidRequest: 0, slowMs: 0 }),
  operations: z.array(operation).min(1).max(16),
  /**
   * The explicit schedule: each decision with the candidates it chose
   * between. Replay follows it exactly: a run that makes a decision it does
   * not record (an empty one records none) diverges. A campaign's own runs
   * (not replays) take their decisions from their choice source instead.
   */
  schedule: z.array(choiceRecord).default([]),
  expect: z.strictObject({
    /** Reports the server holds per operation id at the end. */
    reports: z.record(z.string(), count).optional(),
    /** Invariants expected to be violated (empty: all hold). */
    violations: z.array(z.enum(['exactly-one', 'id-exists', 'stable-key', 'tenant-isolation', 'progress', 'key-reuse', 'deadline', 'retry-after', 'replay-equals-first', 'non-retryable', 'backoff'])).default([]),
  }),
});

/** A validated scenario, defaults filled in. */
export type Scenario = z.output<typeof scenarioSchema>;
/** A scenario as written in a file (defaults may be omitted). */
export type ScenarioInput = z.input<typeof scenarioSchema>;
/** The names of SPEC §5's invariants as scenario files spell them. */
export type InvariantName = Scenario['expect']['violations'][number];
/** Every invariant name, in SPEC order. */
export const INVARIANTS: readonly InvariantName[] = ['exactly-one', 'id-exists', 'stable-key', 'tenant-isolation', 'progress', 'key-reuse', 'deadline', 'retry-after', 'replay-equals-first', 'non-retryable', 'backoff'];
