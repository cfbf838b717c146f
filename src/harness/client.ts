import type { Prng } from '../random/prng.js';
import type { RetryPolicy } from '../backoff/policies.js';
import { bugReportHarnessPolicy, retryDelayMs } from '../backoff/policies.js';
import type { Transport, TransportFailure, WireOutcome } from './transport.js';
import { attemptKey, type KeySource } from './keys.js';
import { MIN_ATTEMPT_MS } from '../retry/classify.js';
import type { EffectId } from '../service/definition.js';

/** SPEC §4: statuses the harness retries (besides transport errors). */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([409, 429, 500, 502, 503, 504]);

/** The text the model is given when the harness cannot tell whether the report exists (the built-in tracker's words). */
export const OUTCOME_UNKNOWN_TEXT =
  'outcome unknown: the report may already exist; query before resubmitting (GET /reports?run_id=<run_id>)';

/**
 * "Outcome unknown" in a service's own words: what one effect is called and
 * the read that tells whether it exists (none: "query the service").
 */
export function outcomeUnknownText(noun: string, queryPath: string | undefined): string {
  return `outcome unknown: the ${noun} may already exist; query before resubmitting (${queryPath === undefined ? 'ask the service' : `GET ${queryPath}`})`;
}

/** Time and randomness for the client; the simulation and real mode supply their own. */
export interface ClientEnv {
  now(): number;
  sleep(ms: number): Promise<void>;
  /** The client's own stream: backoff jitter and per_attempt keys. */
  rng: Prng;
  /** A line of the trace on this worker (shown, not hashed); the simulation provides it. */
  note?(text: string): void;
}

/** One logical operation's business content and identity. */
export interface ReportIntent {
  runId: string;
  module: string;
  title: string;
  steps: string;
  tenant?: string;
  /**
   * Derive keys from this content instead of the report's own: a client bug
   * that sends one key with two different bodies (the generator's `keyReuse`).
   */
  keyFrom?: { runId: string; module: string; title: string };
}

/** Everything recorded about one attempt on the wire. */
export interface AttemptRecord {
  /** Which tool call (harness invocation) this attempt belongs to. */
  toolUseId: string;
  /** The worker that sent it (`op1.w0`): two workers of one operation make the same call, so the call alone does not say whose attempt it was. */
  worker?: string;
  attempt: number;
  key: string | undefined;
  title: string;
  startMs: number;
  endMs: number;
  /** `http` with a status, or a transport failure. */
  outcome: { kind: 'http'; status: number } | { kind: 'transport'; reason: TransportFailure };
  /** The answer was a stored earlier result. */
  replay: boolean;
  /** The effect id a 2xx answer acknowledges (the tracker's report id; a user service's number or text id). */
  reportId?: EffectId;
  /** A 2xx answer's body (invariant 6, replay-equals-first, compares it with the first 2xx of the same key). */
  body?: string;
  /** Which server instance answered (x-instance), if any. */
  instance?: string;
}

/** How one harness invocation ended. */
export type HarnessResult =
  /** A 2xx answer; `reportId` is the id it acknowledges, absent when it names none (a 202 `{"status":"accepted"}`). */
  | { kind: 'success'; reportId?: EffectId; replay: boolean; attempts: number }
  /** A non-retryable answer (400, 422, ...): nothing to gain by retrying. */
  | { kind: 'failed'; status: number; error: string; attempts: number }
  /** Attempts exhausted with no definite answer: the report may exist. */
  | { kind: 'unknown'; error: string; attempts: number };

/** Options of the retrying harness. */
export interface HarnessOptions {
  keySource: KeySource;
  /** Backoff and attempt count. Default: the bug-report harness (Full Jitter 20/200 ms, 4 attempts). */
  policy?: RetryPolicy;
  /** Override the policy's attempt count. */
  maxAttempts?: number;
  /** Per-attempt timeout. Default 2000 ms. */
  timeoutMs?: number;
  /**
   * The tool call's deadline, ms from its first attempt. Default: none. An
   * attempt waits at most until the deadline, and another attempt starts
   * only if at least {@link MIN_ATTEMPT_MS} of it would be left after the
   * backoff (SPEC §6) — else the harness gives up with "outcome unknown".
   */
  deadlineMs?: number;
  /** Where and how to send the operation. Default: the tracker's `POST /reports`. */
  endpoint?: Endpoint;
}

/**
 * How one logical operation goes on the wire: the tracker's `POST /reports`
 * by default, or a user service's operation (see the service API).
 */
export interface Endpoint {
  method: string;
  /** Where one operation is sent (a service's path may name the operation's resource). */
  path(intent: ReportIntent): string;
  /** The request body of one operation. */
  body(intent: ReportIntent): string;
  /** Headers of the service's own on every request of the operation (lower-case names). */
  headers?(intent: ReportIntent): Record<string, string>;
  /** The id a 2xx answer acknowledges, or undefined; `headers` are the answer's (lower-case names). */
  resultId(body: string, headers: Readonly<Record<string, string>>): EffectId | undefined;
  /** "Outcome unknown" for this operation in the service's words (see {@link outcomeUnknownText}). Default {@link OUTCOME_UNKNOWN_TEXT}. */
  unknownText?(intent: ReportIntent): string;
}

/**
 * The retrying client of SPEC §4: submits one tool call's report, retrying on
 * transport errors and 409/429/500/502/503/504 with Full Jitter backoff.
 * Every attempt is appended to `log`.
 */
export async function submitReport(
  intent: ReportIntent,
  toolUseId: string,
  transport: Transport,
  env: ClientEnv,
  opts: HarnessOptions,
  log: AttemptRecord[],
): Promise<HarnessResult> {
  const policy = opts.policy ?? bugReportHarnessPolicy;
  const maxAttempts = opts.maxAttempts ?? policy.maxAttempts;
  const timeoutMs = opts.timeoutMs ?? 2000;
  const endpoint = opts.endpoint;
  const body = endpoint ? endpoint.body(intent) : JSON.stringify({ run_id: intent.runId, module: intent.module, title: intent.title, steps: intent.steps });
  let lastError = '';
  /** The last answer's Retry-After, for policies that let the server's value win (SPEC §1: the Anthropic SDK). */
  let retryAfterMs: number | undefined;
  const keyCtx = { ...(intent.keyFrom ?? { runId: intent.runId, module: intent.module, title: intent.title }), toolUseId, rng: env.rng };
  const deadline = opts.deadlineMs === undefined ? Infinity : env.now() + opts.deadlineMs;
  const unknown = endpoint?.unknownText?.(intent) ?? OUTCOME_UNKNOWN_TEXT;
  const own = endpoint?.headers?.(intent);
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const key = attemptKey(opts.keySource, keyCtx);
    const headers: Record<string, string> = { 'content-type': 'application/json', ...own };
    if (key !== undefined) headers['idempotency-key'] = key;
    if (intent.tenant !== undefined) headers['x-tenant'] = intent.tenant;
    const startMs = env.now();
    const wire = await transport.send({ method: endpoint?.method ?? 'POST', path: endpoint?.path(intent) ?? '/reports', headers, body }, Math.min(timeoutMs, deadline - startMs));
    const rec = record(wire, toolUseId, attempt, key, intent.title, startMs, env.now(), endpoint?.resultId ?? parseReportId);
    log.push(rec);
    if (wire.kind === 'response') {
      // A 2xx is a success whether or not it names an id: a service's
      // `resultId` may say an answer names none (a 202 for work done later).
      // Taken for a non-retryable failure, it left the key-reuse probe
      // unsent and "no effect once the client saw success" unjudged, so a
      // 202 service that lost its work held (until 2026-12).
      if (wire.status >= 200 && wire.status < 300) {
        return rec.reportId === undefined
          ? { kind: 'success', replay: rec.replay, attempts: attempt }
          : { kind: 'success', reportId: rec.reportId, replay: rec.replay, attempts: attempt };
      }
      if (!RETRYABLE_STATUSES.has(wire.status)) {
        return { kind: 'failed', status: wire.status, error: errorText(wire.body), attempts: attempt };
      }
      lastError = `HTTP ${wire.status}`;
      retryAfterMs = retryAfterOf(wire.headers['retry-after']);
    } else {
      lastError = wire.reason;
      retryAfterMs = undefined;
    }
    if (attempt < maxAttempts) {
      const delay = retryDelayMs(policy, attempt, env.rng, retryAfterMs === undefined ? undefined : { retryAfterMs });
      if (env.now() + delay + MIN_ATTEMPT_MS > deadline) {
        return { kind: 'unknown', error: `${unknown} — the call's deadline ran out after attempt ${attempt}: ${lastError}`, attempts: attempt };
      }
      await env.sleep(delay);
    }
  }
  return { kind: 'unknown', error: `${unknown} — last attempt: ${lastError}`, attempts: maxAttempts };
}

/**
 * Retry-After in ms when it is delay-seconds (RFC 9110: a non-negative
 * integer; a decimal is read too, as the Anthropic SDK does). An HTTP-date
 * is not read: the simulation has no calendar, and real mode's only
 * Retry-After (503 busy) is in seconds.
 */
export function retryAfterOf(v: string | undefined): number | undefined {
  if (v === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(v)) return undefined;
  return Number(v) * 1000;
}

function record(
  wire: WireOutcome,
  toolUseId: string,
  attempt: number,
  key: string | undefined,
  title: string,
  startMs: number,
  endMs: number,
  resultId: Endpoint['resultId'],
): AttemptRecord {
  // Literals with the fields in one fixed order (not spreads of a base
  // object): cheaper to build, and every record has the same shape.
  if (wire.kind === 'transport_error') {
    return { toolUseId, attempt, key, title, startMs, endMs, outcome: { kind: 'transport', reason: wire.reason }, replay: false };
  }
  const rec: AttemptRecord = {
    toolUseId,
    attempt,
    key,
    title,
    startMs,
    endMs,
    outcome: { kind: 'http', status: wire.status },
    replay: wire.headers['idempotent-replay'] === 'true',
  };
  if (wire.headers['x-instance'] !== undefined) rec.instance = wire.headers['x-instance'];
  if (wire.status >= 200 && wire.status < 300) {
    const id = resultId(wire.body, wire.headers);
    if (id !== undefined) rec.reportId = id;
    rec.body = wire.body;
  }
  return rec;
}

function parseReportId(body: string): number | undefined {
  try {
    const v = JSON.parse(body) as { report_id?: unknown };
    return typeof v.report_id === 'number' ? v.report_id : undefined;
  } catch {
    return undefined;
  }
}

function errorText(body: string): string {
  try {
    const v = JSON.parse(body) as { error?: unknown };
    return typeof v.error === 'string' ? v.error : body;
  } catch {
    return body;
  }
}
