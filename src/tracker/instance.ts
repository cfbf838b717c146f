import type { StepEnv } from './env.js';
import type { Footprint } from '../sim/footprint.js';
import { CrashFault, fire, resolveFaults, type FaultOptions } from './faults.js';
import { fingerprint } from './fingerprint.js';
import { assertLease, DEFAULT_CLIENT_TIMEOUT_MS, DEFAULT_LEASE_MS, leaseProblem } from './lease.js';
import { errorResponse, type TrackerRequest, type TrackerResponse } from './messages.js';
import { getReport, listReports } from './reads.js';
import { scopeKey } from './scope.js';
import { isSqliteError, type Store } from './store.js';
import type { StrategyContext, Variant, WriteRequest, WriteStrategy } from './strategy.js';
import { headerValueProblem, validateContentType, validateKey, validateReportBody, validateTenant, type ReportInput } from './validate.js';
import { createStrategy, usesLease } from './variants.js';

/** Options of a {@link TrackerInstance}. */
export interface TrackerInstanceOptions {
  /** Which write strategy this instance runs. */
  variant: Variant;
  /** The database; several instances may share one Store. */
  db: Store;
  /** Lease of an in-progress key (key_atomic variants). Default 5000. */
  leaseMs?: number;
  /** The clients' timeout, used only for the lease check. Default 2000. */
  clientTimeoutMs?: number;
  /** Declared upper bound of processing time, for the lease check. Default: `faults.slowMs`. */
  maxProcessingMs?: number;
  /** Fault knobs; omitted knobs mean no fault. */
  faults?: Partial<FaultOptions>;
  /** Name for messages and the `x-instance` response header. Default `'tracker'`. */
  name?: string;
  /**
   * Skip the lease check, to build a deliberately unsafe instance (SPEC §4
   * scenario 6: lease 0.5 s, processing 0.8 s). Simulation only.
   */
  allowUnsafeLease?: boolean;
  /** memory_singleflight: replay window of completed results, ms. Default 24 h. */
  completedTtlMs?: number;
}

/**
 * One tracker server process. `handle` serves one request; the env passed
 * with it supplies time and interleaving. Kill is done from outside: the
 * caller simply never resumes the in-flight requests (it must not reject
 * their pending steps, or catch blocks would run as if the process lived),
 * then calls {@link TrackerInstance.restart}.
 *
 * @example
 * const store = openStore();
 * const a = new TrackerInstance({ variant: 'key_atomic', db: store, faults: { slowMs: 300 } });
 * const res = await a.handle({ method: 'POST', path: '/reports', headers: { 'idempotency-key': 'k' }, body }, env);
 */
export class TrackerInstance {
  readonly name: string;
  readonly variant: Variant;
  readonly store: Store;
  readonly leaseMs: number;
  readonly clientTimeoutMs: number;
  /** Live fault state: counters decrement as they fire; may be re-armed by assignment. */
  readonly faults: FaultOptions;
  /** Number of restarts so far. */
  restarts = 0;
  private readonly strategy: WriteStrategy;
  private readonly allowUnsafeLease: boolean;
  private readonly maxProcessingMs: number;

  constructor(opts: TrackerInstanceOptions) {
    this.name = opts.name ?? 'tracker';
    // The name is sent as a header on every answer: a value node refuses to
    // write would turn every answer into a failure after its commit.
    const nameProblem = headerValueProblem(this.name);
    if (nameProblem !== null) throw new Error(`instance name ${JSON.stringify(this.name)} ${nameProblem}`);
    this.variant = opts.variant;
    this.store = opts.db;
    this.leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    this.clientTimeoutMs = opts.clientTimeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS;
    this.faults = resolveFaults(opts.faults);
    this.strategy = createStrategy(opts.variant, { completedTtlMs: opts.completedTtlMs });
    this.allowUnsafeLease = opts.allowUnsafeLease ?? false;
    this.maxProcessingMs = opts.maxProcessingMs ?? 0;
    const pause = this.faults.pause;
    if (pause && !this.strategy.stepLabels.includes(pause.atStep)) {
      throw new Error(
        `${this.name}: pause.atStep '${pause.atStep}' is not a step of ${opts.variant} ` +
          `(steps: ${this.strategy.stepLabels.join(', ')}); the fault would never fire`,
      );
    }
    if (usesLease(opts.variant) && !opts.allowUnsafeLease) {
      const processingMs = Math.max(this.faults.slowMs, opts.maxProcessingMs ?? 0);
      try {
        assertLease({ leaseMs: this.leaseMs, clientTimeoutMs: this.clientTimeoutMs, processingMs });
      } catch (e) {
        throw new Error(`${this.name} (${opts.variant}): ${(e as Error).message}`);
      }
    }
  }

  /**
   * Why re-arming the slow-processing fault at `slowMs` would break the
   * lease rule this instance was built under, or null when it would not
   * (always null for variants without a lease, or with allowUnsafeLease).
   * Whoever changes `faults.slowMs` on a live instance asks this first — the
   * constructor's check only saw the value it was given.
   */
  slowMsProblem(slowMs: number): string | null {
    if (!usesLease(this.variant) || this.allowUnsafeLease) return null;
    const problem = leaseProblem({ leaseMs: this.leaseMs, clientTimeoutMs: this.clientTimeoutMs, processingMs: Math.max(slowMs, this.maxProcessingMs) });
    return problem === null ? null : `${this.name} (${this.variant}): ${problem}`;
  }

  /** Serves one request. Never rejects for expected failures; those are responses. */
  async handle(req: TrackerRequest, env: StepEnv): Promise<TrackerResponse> {
    const res = await this.dispatch(req, env);
    res.headers['x-instance'] = this.name;
    return res;
  }

  /** Reports in the database now (the simulated network traces their changes). */
  effectCount(): number {
    return this.store.countReports();
  }

  /** A process restart: in-process memory (singleflight maps) is lost; SQLite data is kept. */
  restart(): void {
    this.strategy.restart();
    this.restarts += 1;
  }

  private async dispatch(req: TrackerRequest, env: StepEnv): Promise<TrackerResponse> {
    const q = req.path.indexOf('?');
    const pathname = q < 0 ? req.path : req.path.slice(0, q);
    const method = req.method.toUpperCase();
    if (method === 'GET') {
      // Reads are scoped by tenant like writes (SPEC §5 invariant 4).
      const tenant = validateTenant(lowerCaseHeaders(req.headers)['x-tenant']);
      if (!tenant.ok) return errorResponse(tenant.status, tenant.error);
      if (pathname === '/reports') return listReports(this.store, new URLSearchParams(q < 0 ? '' : req.path.slice(q + 1)), tenant.value);
      const id = /^\/reports\/([^/]+)$/.exec(pathname);
      if (id) {
        let idText: string;
        try {
          idText = decodeURIComponent(id[1]!);
        } catch {
          return errorResponse(400, `malformed escape in report id '${id[1]}'`);
        }
        return getReport(this.store, idText, tenant.value);
      }
    }
    if (pathname === '/reports') {
      if (method === 'POST') return this.post(req, env);
      return errorResponse(405, `method ${method} not allowed on /reports`, { allow: 'GET, POST' });
    }
    const m = /^\/reports\/([^/]+)$/.exec(pathname);
    if (m) {
      return errorResponse(405, `method ${method} not allowed on ${pathname}`, { allow: 'GET' });
    }
    return errorResponse(404, `no route for ${method} ${pathname}`);
  }

  private async post(req: TrackerRequest, env: StepEnv): Promise<TrackerResponse> {
    const write = this.validate(req);
    if ('status' in write) return write;
    let res: TrackerResponse;
    try {
      res = await this.strategy.write(write, this.context(env));
    } catch (e) {
      if (e instanceof CrashFault) return errorResponse(500, `internal error: ${e.message}`);
      if (isSqliteError(e, 'SQLITE_BUSY')) return errorResponse(503, 'database busy; retry', { 'retry-after': '1' });
      throw e; // a programming error: let it surface instead of hiding it as a 500
    }
    // Only a fresh commit can be "lost after commit"; replays and errors committed nothing.
    if (res.status === 201 && !res.replay && fire(this.faults, 'loseResponseAfterCommit')) {
      return { ...res, dropConnection: true };
    }
    return res;
  }

  private validate(req: TrackerRequest): WriteRequest | TrackerResponse {
    const headers = lowerCaseHeaders(req.headers);
    const key = validateKey(headers['idempotency-key']);
    if (!key.ok) return errorResponse(key.status, key.error);
    const tenant = validateTenant(headers['x-tenant']);
    if (!tenant.ok) return errorResponse(tenant.status, tenant.error);
    const type = validateContentType(headers['content-type']);
    if (!type.ok) return errorResponse(type.status, type.error);
    const body = checkBody(req.body);
    if (!body.ok) return errorResponse(body.status, body.error);
    return {
      tenant: tenant.value,
      key: key.value,
      // key_atomic_unscoped keys its table by the raw key: the tenant-leak canary.
      scopedKey: key.value === null ? null : this.variant === 'key_atomic_unscoped' ? key.value : scopeKey(tenant.value, 'POST', key.value),
      report: body.value,
      fingerprint: body.fingerprint,
    };
  }

  private context(env: StepEnv): StrategyContext {
    return new InstanceContext(this.store, env, this.leaseMs, this.faults);
  }
}

/**
 * The {@link StrategyContext} of one request. A class rather than an object
 * of closures: a request builds one, and closures cost an allocation each
 * (plus a `name` property definition each under the tsx loader).
 */
class InstanceContext implements StrategyContext {
  /** This request stalled in a `thenCrash` pause: it crashes at the crash point. */
  private crashAfterPause = false;
  /** The current phase's footprint, for the sleeps inside it. */
  private phase: Footprint | undefined;

  constructor(
    readonly store: Store,
    readonly env: StepEnv,
    readonly leaseMs: number,
    private readonly faults: FaultOptions,
  ) {}

  nowMs(): number {
    return this.env.now() + this.faults.clockOffsetMs;
  }

  async step(label: string, footprint?: Footprint): Promise<void> {
    // While a fault counter of this instance is armed, whichever request
    // reaches it first takes it: every phase may race for it, so none is
    // declared independent. Counters only count down, so once they are all
    // zero they stay zero and the strategy's own declaration is exact.
    const f = this.faults;
    const armed = f.crashMidRequest > 0 || f.loseResponseAfterCommit > 0 || (f.pause !== undefined && f.pause.count > 0);
    this.phase = armed ? undefined : footprint;
    await this.env.step(label, this.phase);
    const p = this.faults.pause;
    if (p && p.count > 0 && p.atStep === label) {
      p.count -= 1;
      if (p.thenCrash) this.crashAfterPause = true;
      await this.env.sleep(p.ms, this.phase);
    }
  }

  async process(): Promise<void> {
    // The rest of the phase runs after the sleep: it touches what the phase declared.
    if (this.faults.slowMs > 0) await this.env.sleep(this.faults.slowMs, this.phase);
  }

  crashPoint(point: string): void {
    if (this.crashAfterPause) {
      this.crashAfterPause = false;
      throw new CrashFault(`${point} (after a pause)`);
    }
    if (fire(this.faults, 'crashMidRequest')) throw new CrashFault(point);
  }
}

type CheckedBody = { ok: true; value: ReportInput; fingerprint: string } | { ok: false; status: 400 | 413 | 415; error: string };

/**
 * Validation and fingerprint of recently seen bodies. Both are pure
 * functions of the body text, and a retrying client sends the same text
 * again and again, so the schema check and the SHA-256 run once per text.
 * Small bodies only, and a bounded number of them: the memo is a cache, not
 * a store. Cached values are frozen, since they are shared between requests.
 */
const bodyMemo = new Map<string, CheckedBody>();
const BODY_MEMO_ENTRIES_MAX = 256;
const BODY_MEMO_CHARS_MAX = 4096;

function checkBody(text: string): CheckedBody {
  const hit = bodyMemo.get(text);
  if (hit !== undefined) return hit;
  const v = validateReportBody(text);
  const checked: CheckedBody = v.ok
    ? Object.freeze({ ok: true as const, value: Object.freeze(v.value), fingerprint: fingerprint(v.value) })
    : Object.freeze(v);
  if (text.length <= BODY_MEMO_CHARS_MAX) {
    if (bodyMemo.size >= BODY_MEMO_ENTRIES_MAX) bodyMemo.clear();
    bodyMemo.set(text, checked);
  }
  return checked;
}

/** Header names are specified lower-case; tolerate other casings from hand-built requests. */
function lowerCaseHeaders(h: Record<string, string | undefined>): Record<string, string | undefined> {
  for (const k in h) {
    if (k !== k.toLowerCase()) {
      const out: Record<string, string | undefined> = {};
      for (const [name, v] of Object.entries(h)) out[name.toLowerCase()] = v;
      return out;
    }
  }
  return h;
}
