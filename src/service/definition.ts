/**
 * The service API: how a user describes their own idempotent endpoint so
 * that retrysim can host it on the simulated network (and for real), run the
 * standard fault space against it and judge its effects. A service is one
 * module whose default export (or, without one, a named export `service`)
 * is a {@link ServiceDefinition}; it needs no
 * runtime import from retrysim (`import type` is enough), so it loads the
 * same way from a checkout, an installed package or a test file.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { Deferred } from '../tracker/env.js';
import type { Footprint } from '../sim/footprint.js';
import type { ProcessIdentity } from '../sim/process-identity.js';

/** A better-sqlite3 connection (the service's own database). */
export type ServiceDb = BetterSqlite3.Database;

/** One HTTP request as the service sees it. Header names are lower-case. */
export interface ServiceRequest {
  method: string;
  /** Path with optional query string. */
  path: string;
  headers: Readonly<Record<string, string | undefined>>;
  /** The body text (JSON for the built-in client). */
  body: string;
}

/** One HTTP response. */
export interface ServiceResponse {
  status: number;
  /** Response headers; undefined values are left out. `idempotent-replay: true` marks a stored answer. */
  headers?: Record<string, string | undefined>;
  body: string;
}

/**
 * What a handler may use besides its arguments. Time, interleaving and
 * crashes come from here, so the same handler runs in simulation (virtual
 * time, the scheduler deciding at every step) and for real.
 */
/** @internal What a process's own background work (see {@link ServiceSim.background}) may do on the kernel. */
/** How an error nothing handled reached Node, in its own words: both end the process. Default `unhandled rejection`. */
export type CrashKind = 'unhandled rejection' | 'uncaught exception';

export interface BackgroundSim {
  /** The instance's time (the run's epoch plus virtual time plus its clock skew). */
  now(): number;
  /** The time without the instance's skew (the simulated store's clock, on the run's epoch). */
  sharedNow(): number;
  /** An interleaving point before a phase that touches `footprint`. */
  step(label: string, footprint?: Footprint): Promise<void>;
  /** Says what this task's step `label` did (a store command's keys and arguments, and its answer); shown, not hashed. Real mode: absent. */
  detail?(label: string, call: string, answer: string): void;
  /** Waits `ms` of virtual time. */
  sleep(ms: number): Promise<void>;
  /** Whether a task other than this one (a request, a client, another process's work) is still live. */
  othersLive(): boolean;
  /** Whether this process is still the one that started the work (false once it was killed). */
  alive(): boolean;
  /**
   * The process dies of `reason`, an error nothing handled (an unhandled
   * rejection in a timer callback, or an exception one threw), as Node's
   * would; in simulation the call never returns. Absent, or returning: real
   * mode (the caller reports it).
   */
  crash?(reason: unknown, kind?: CrashKind): Promise<void>;
  /** Kernel time (as {@link sharedNow}) until which the process is stalled by a pause fault; absent in real mode. */
  frozenUntil?(): number | undefined;
}

export interface ServiceSim<M = unknown> {
  /**
   * Current time in ms since 1970, as `Date.now()` reads it in the handler:
   * in simulation the scenario's epoch (`service.epochMs`: 2026-01-01 in
   * files found since 2026-12, 0 in older ones) plus virtual time plus this
   * instance's clock skew; for real, the machine's clock.
   */
  now(): number;
  /** @internal The time without this instance's skew (the simulated store's clock); hosts provide it. */
  sharedNow?(): number;
  /** @internal The simulated process this request runs in (its hostname and pid; src/sim/process-identity.ts); undefined in real mode. */
  readonly identity?: ProcessIdentity;
  /** @internal A line of the trace on this request (shown, not hashed); hosts provide it. */
  note?(text: string): void;
  /** @internal Says what this request's step did (a store command's keys and arguments, and its answer); shown, not hashed. */
  detail?(step: string, call: string, answer: string): void;
  /**
   * @internal Work the process goes on doing after its answers (a hosted
   * app's timers): a task of its own on this instance, killed with it; in
   * real mode, work on the wall clock and real timers.
   */
  background?(name: string, body: (bg: BackgroundSim) => Promise<void>): void;
  /**
   * @internal The process dies of `reason`, an error nothing handled (an
   * unhandled rejection, or an exception a timer callback threw), as Node's
   * would: in simulation every request in it goes unanswered, its memory is
   * lost, it restarts as after a kill, and the call never returns. It
   * returns in real mode (the caller reports it).
   */
  crashProcess?(reason: unknown, kind?: CrashKind): Promise<void>;
  /**
   * @internal Kernel time (as {@link sharedNow}) until which this process is
   * stalled by a pause fault (a GC pause stops its whole event loop): a
   * hosted app's timers do not fire before it. Hosts provide it.
   */
  frozenUntil?(): number | undefined;
  /**
   * An interleaving point: other requests may run here, and the pause, slow
   * and kill faults fire here. `label` must be one of the definition's
   * `steps`. Put one between every two transactions; never inside one.
   *
   * `footprint` (optional) declares what the phase that follows touches up
   * to the next step or the answer, e.g. `{ writes: ['db:key:' + key] }`:
   * exhaustive exploration then runs only one order of two phases that
   * touch nothing in common (partial-order reduction). Omitted, the phase
   * conflicts with everything, which is always safe. A declaration must
   * cover everything another request could observe.
   */
  step(label: string, footprint?: Footprint): Promise<void>;
  /** Waits `ms` of (virtual) time. */
  sleep(ms: number): Promise<void>;
  /** A promise the scheduler knows about (e.g. for single-flight: losers await the winner). */
  defer<T>(): Deferred<T>;
  /**
   * A named crash point (one of the definition's `crashPoints`): throws when
   * the crash fault is armed for it, and the host answers 500 — as a real
   * framework turns an uncaught exception into one. Run your cleanup in a
   * `catch`/`finally` as you would for any exception.
   */
  crashPoint(label: string): void;
  /**
   * Marks a situation of your own as reached in this run (one of the
   * definition's `situations`), e.g. `sim.reached('ttl-expired')` where a
   * stored answer's TTL ran out. It only counts: a campaign's coverage table
   * says how many runs reached each declared situation, and a holding
   * verdict lists the ones no run reached — a green that never saw the TTL
   * expire says so. Costs nothing outside a campaign.
   *
   * @example
   * if (row && sim.now() - row.created_at > ttlMs) { sim.reached('ttl-expired'); ... }
   */
  reached(label: string): void;
  /** The service's database (shared by every instance; survives kill/restart). */
  readonly db: ServiceDb;
  /** This instance's in-process memory (from `memory()`); lost on kill/restart. */
  readonly memory: M;
  /** This instance's name (`s0`, `s1`, ...). */
  readonly instance: string;
}

/**
 * The business content of one logical operation, as the built-in client sends it.
 * `check` generates it in the service's own words: `runId` `run-<n>` (numbered per
 * tenant), `module` the service's `effects.noun` (default `effect`), `title`
 * `<noun> <n>`, `steps` empty.
 */
export interface OperationIntent {
  /** The operation's identity, unique per tenant (an order id, a run id). */
  runId: string;
  /** Free text the body may use (a module, a product). */
  module: string;
  /** Free text the body may use. The key-reuse probe changes it: a body without it gets no probe (the campaign says so). */
  title: string;
  steps: string;
  /** Tenant, sent as header `x-tenant` (default `default`). */
  tenant: string;
}

/**
 * The id of one effect, as your database keys it: an INTEGER rowid, or text
 * (a UUID from `crypto.randomUUID()`, a ULID, `"ord_123"`). One id is one
 * value whatever its type says: `42` and `"42"` name the same effect, so an
 * integer key answered as a JSON string (`{"id":"42"}`) is judged as the
 * row it names. A string id must not be empty.
 */
export type EffectId = number | string;

/** Which logical operation an effect belongs to. */
export interface EffectOwner {
  runId: string;
  tenant: string;
}

/**
 * A user service. Everything the framework needs to host it, generate its
 * fault space and judge it; the framework keeps no other way in.
 *
 * @example
 * import type { ServiceDefinition } from 'retrysim';
 * export default {
 *   name: 'payments',
 *   tables: ['payments'],
 *   setup: (db) => db.exec('CREATE TABLE payments (id INTEGER PRIMARY KEY, order_id TEXT, tenant TEXT)'),
 *   steps: ['insert'],
 *   operation: { path: '/payments', body: (op) => JSON.stringify({ order_id: op.runId }) },
 *   effects: { of: (db, op) => db.prepare('SELECT id FROM payments WHERE order_id = ? AND tenant = ?').pluck().all(op.runId, op.tenant) as number[] },
 *   async handle(req, sim) { await sim.step('insert'); ... },
 * } satisfies ServiceDefinition;
 */
/** What a scenario file fixes about a service's deployment (see {@link ServiceDefinition.deploy}). */
export interface ServiceDeployment {
  /** `service.leaseMs`. */
  leaseMs: number;
  /** `service.completedTtlMs`, when set. */
  completedTtlMs?: number;
  /** The longest a client waits for one answer. */
  clientTimeoutMs: number;
  /** The longest processing time the faults add (`faults.slowMs`). */
  processingMs: number;
  /** `service.allowUnsafeLease`: build an unsafe deployment on purpose. */
  allowUnsafe: boolean;
}

export interface ServiceDefinition<M = unknown> {
  /** Short name for messages and file names (letters, digits, `_`, `-`). */
  name: string;
  /** The tables the service owns; `setup` must create exactly these. */
  tables: readonly string[];
  /**
   * Creates the schema on a fresh database. Runs once per database, never per request. May be
   * `async` (a query builder's schema calls awaited): it is then awaited once, when the module loads,
   * and every database is rebuilt from what it made (src/service/async-setup.ts).
   */
  setup(db: ServiceDb): void;
  /** Every label the handler passes to `sim.step`, in the order a request reaches them. */
  steps: readonly string[];
  /** Every label the handler passes to `sim.crashPoint`. Default: none. */
  crashPoints?: readonly string[];
  /**
   * Every label the handler passes to `sim.reached`: situations of your
   * own that a campaign should report on (coverage: how many runs reached
   * each; a holding verdict lists those never reached). Default: none.
   */
  situations?: readonly string[];
  /**
   * The step after which the slow fault's processing time passes, unless a
   * scenario names another (`faults.slowAtStep`). Default: the first step.
   */
  slowStep?: string;
  /**
   * Builds the in-process memory of one instance, once per process start: at
   * start and after every restart. Default: `{}`. In a simulation it runs as
   * that process on the kernel's clock (its epoch and clock offset), with its
   * hostname and pid and a stream seeded per start, so a boot id from
   * `crypto.randomUUID()` replays the same; a timer it arms (an eviction
   * sweep) fires on virtual time, waits out a pause and dies at a kill. In
   * real mode (`serve`) it is the machine's.
   */
  memory?: () => M;
  /**
   * The service as deployed with the knobs a scenario file sets in
   * `service` (its lease, its completed-key TTL), for a service whose
   * behaviour depends on them; the built-in tracker is one. Throw an Error
   * saying why when the deployment breaks the service's own safety rule
   * (unless `allowUnsafe`: the file builds it so on purpose). Default: the
   * file's knobs do not apply to the service.
   */
  deploy?(d: ServiceDeployment): ServiceDefinition<M>;
  /** Serves one request. Expected failures (409, 422) are responses; a throw is a bug in the service. */
  handle(req: ServiceRequest, sim: ServiceSim<M>): Promise<ServiceResponse>;
  /** The logical operation the built-in client performs against the service. */
  operation: {
    /** Default `POST`. */
    method?: string;
    /**
     * Where the operation is sent: a path (`'/orders'`), or the path of one
     * operation when it names its resource (`(op) => \`/orders/${op.runId}\``:
     * a PUT whose URL is the idempotency key, a POST under a parent). Either
     * starts with `/`; a query string is part of it.
     */
    path: string | ((op: OperationIntent) => string);
    /** The request body of one logical operation (must depend on `runId`; without `title` the key-reuse probe is left out). */
    body(op: OperationIntent): string;
    /**
     * Headers of your own on every request of the operation, e.g. the
     * credentials your app's middleware asks for (`(op) => ({ authorization:
     * 'Bearer ' + tokenOf(op.tenant) })`): string values; `content-type`
     * (default `application/json`) may be replaced, `idempotency-key` and
     * `x-tenant` are the campaign's. The progress query gets them too.
     */
    headers?(op: OperationIntent): Record<string, string>;
    /**
     * Whether the service reads the `Idempotency-Key` header (default true).
     * `false`: it is idempotent by its URL instead (a PUT of a resource by its
     * own id, the last write winning), so it makes no promise about a key
     * sent again with another body, and the key-reuse probe is left out of
     * the fault space (said so on the `faults:` line). The built-in client
     * still sends a key; nothing else changes.
     */
    readsKey?: boolean;
    /**
     * The id of the effect a 2xx answer acknowledges, or undefined when the
     * answer names none. Default: the JSON body's `id` field when it is a
     * number or a non-empty string (`{"id":42}`, `{"id":"3f2a…"}`). Anything
     * else returned (null, an object, an empty string) is refused in one line.
     * `headers` are the answer's (lower-case names), for a service that names
     * the effect in a header instead: `(body, h) => h.location?.split('/').pop()`.
     */
    resultId?(body: string, headers: Readonly<Record<string, string>>): EffectId | undefined;
  };
  /** How to count effects: the checkers judge a run by these and nothing else. */
  effects: {
    /**
     * Ids of the effects of one logical operation (e.g. the rows of your
     * table for this order): numbers or non-empty strings, as your table
     * keys them (`SELECT id FROM orders WHERE …` of an `id TEXT PRIMARY KEY`).
     */
    of(db: ServiceDb, op: EffectOwner): EffectId[];
    /**
     * Which operation an effect id belongs to, or undefined when no effect has
     * it (judges "acknowledged ids exist"). `id` is what `resultId` read from
     * an answer: a fresh UUID the service never stored is found by this.
     */
    owner?(db: ServiceDb, id: EffectId): EffectOwner | undefined;
    /** How many effects exist in all (for the trace's `db: +1 effect` lines). Default: not traced. */
    total?(db: ServiceDb): number;
    /** What one effect is called in messages and the trace (`report`, `payment`). Default `effect`. */
    noun?: string;
  };
  /**
   * Opt in to SPEC §5 invariant 5, `progress`: after the main run, once the
   * faults stop (lost answers, crashes, pauses; no kill) and `settleMs` more
   * has passed, every operation that did not succeed behaves as a
   * well-behaved client after "outcome unknown": it asks `query` whether it
   * took effect, and otherwise resubmits its last request until a 2xx, a
   * non-retryable answer or a budget of virtual time. An operation that ends
   * without success and without an effect violates `progress`.
   */
  progress?: {
    /** How long after the main run the resubmissions start: every lease has expired by then (ms). */
    settleMs: number;
    /**
     * The service relies on a lease of `settleMs`: then a deployment whose
     * lease does not outlast the client's timeout + processing + clock skew
     * is mis-configured (SPEC §3), and its lack of progress is excused.
     */
    leased: boolean;
    /** The read a client sends to ask whether the operation took effect (method GET; `x-tenant` and `operation.headers` are added). */
    query(op: EffectOwner): { path: string };
    /** Whether the query's answer shows the effect. */
    found(status: number, body: string): boolean;
  };
}
