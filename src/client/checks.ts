/**
 * The checks that judge a retry client's own behaviour from what each call
 * sent and got back (SPEC §6): the same for a simulated run (run.ts) and a
 * wall-clock one (the flakiness lab's). In a file of their own so that
 * `npm run mutate` mutates exactly them (its recovery shard), with no line
 * ranges to drift as run.ts changes.
 */
import type { Violation } from '../checkers/invariants.js';
import { canonicalJson } from '../sim/canonical.js';
import type { ClientRun } from './run.js';
import type { SentRequest } from './sim-fetch.js';

/**
 * The checks that judge a client's own behaviour from what it sent and when
 * (`progress`, `deadline`, `retry-after`, `non-retryable`, `backoff`) — the same for a
 * simulated run and a wall-clock one (the flakiness lab's), given each
 * call's requests with their send and answer times. `epochMs`: the
 * wall-clock instant of time 0 on the client's clock (a scenario's
 * `client.epochMs`, 0 when absent; a wall-clock run's start), which places a
 * `Retry-After` given as an HTTP-date on the run's time line; without it
 * only the delay-seconds form is judged.
 */
export function clientCheckViolations(workers: ClientRun['workers'], deadlineMs: number, epochMs?: number): Violation[] {
  return [...silentViolations(workers), ...deadlineViolations(workers, deadlineMs), ...retryAfterViolations(workers, epochMs), ...nonRetryableViolations(workers), ...backoffViolations(workers), ...sharedKeyViolations(workers)];
}

/**
 * `key-reuse` for a retry client: two different logical operations of one
 * tenant never send the same Idempotency-Key (the other half of
 * `stable-key`), and one key never carries two different bodies (JSON
 * compared in canonical form). A key made from what two operations share — the time to
 * the second or millisecond, a counter per process (repeating only across
 * processes: `check --client` loads the module once per call to find it,
 * `perProcess`), a hash of a body that does not name
 * the operation — gets the second operation refused (422) by a service that
 * fingerprints bodies, or answered with the first one's result by one that
 * does not: either way an operation is lost. Workers of one operation (its
 * concurrent duplicates) share its key by design; tenants scope keys.
 */
function sharedKeyViolations(workers: ClientRun['workers']): Violation[] {
  const out: Violation[] = [];
  const first = new Map<string, { w: ClientRun['workers'][number]; atMs: number; request: string; body: string }>();
  const sends = workers.flatMap((w) => w.sent.filter((r) => r.key !== undefined).map((r) => ({ w, r }))).sort((a, b) => a.r.atMs - b.r.atMs);
  const reported = new Set<string>();
  for (const { w, r } of sends) {
    const k = JSON.stringify([w.tenant ?? 'default', r.key]);
    const seen = first.get(k);
    if (seen === undefined) first.set(k, { w, atMs: r.atMs, request: `${r.method} ${r.path}`, body: sameRequestText(r.body) });
    else if (reported.has(w.operation)) continue;
    else if (seen.w.operation !== w.operation) {
      reported.add(w.operation);
      out.push({ invariant: 'key-reuse', op: w.operation, detail: `${w.name} sent Idempotency-Key ${r.key} at t=${r.atMs} ms, the key ${seen.w.name} sent for another operation (${seen.w.operation}) at t=${seen.atMs} ms: a service keyed on it cannot tell the two apart` });
    } else if (`${r.method} ${r.path}` === seen.request && sameRequestText(r.body) !== seen.body) {
      // Only the operation's own request again: a GET asking (with the key) whether it took effect is another request.
      // One key names one request: a retry hook that stamps the attempt or the time into the payload
      // sends the key with a body the service never ran, and the answer it gets is about another request.
      reported.add(w.operation);
      out.push({ invariant: 'key-reuse', op: w.operation, detail: `${w.name} sent Idempotency-Key ${r.key} at t=${r.atMs} ms with another body than it carried at t=${seen.atMs} ms: to the service the key names a different request (refused 422 where bodies are fingerprinted, answered with the first one's result where not)` });
    }
  }
  return out;
}

/** A body as "the same request" compares it: JSON in canonical form (key order and spacing do not count), anything else as sent. */
function sameRequestText(body: string): string {
  try {
    return canonicalJson(JSON.parse(body));
  } catch {
    return body;
  }
}

/**
 * `retry-after`: after an answer that carried `Retry-After: N` (seconds, as
 * the throttle fault sends it), the same call of the client sends nothing
 * for N s; after one that carried an HTTP-date (RFC 9110 allows both; a
 * user's service may send `new Date(now + 3000).toUTCString()`), nothing
 * before that instant on the client's clock (given `epochMs`). The date form
 * was not judged before 2026-12: a client that reads only the number
 * (`Number(h)` is NaN for a date, so it falls back to its backoff) held
 * against a service that sends dates.
 */
function retryAfterViolations(workers: ClientRun['workers'], epochMs: number | undefined): Violation[] {
  const out: Violation[] = [];
  for (const w of workers) {
    for (const r of w.sent) {
      if (r.retryAfter === undefined || r.answeredAtMs === undefined) continue;
      const value = r.retryAfter.trim();
      let untilMs: number;
      let asked: string;
      if (/^\d+$/.test(value)) {
        const waitMs = Number(value) * 1000;
        untilMs = r.answeredAtMs + waitMs;
        asked = `at least ${waitMs} ms`;
      } else {
        // An HTTP-date (IMF-fixdate or RFC 850, both in GMT; not V8's lenient guesses at '1.5' or 'Mar 5') has
        // whole seconds: the instant it names, on the client's clock, is what a client waits for.
        const at = epochMs === undefined || !/\d\d:\d\d:\d\d GMT$/.test(value) ? NaN : Date.parse(value);
        if (!Number.isFinite(at)) continue;
        untilMs = at - epochMs!;
        if (untilMs <= r.answeredAtMs) continue;
        asked = `not before t=${untilMs} ms, the date it names`;
      }
      const next = w.sent.find((q) => q.atMs >= r.answeredAtMs! && q !== r);
      // 1 ms of slack: a client's clock (Date.now, timers) has whole milliseconds, the network's time does not.
      if (next !== undefined && next.atMs < untilMs - 1) {
        out.push({ invariant: 'retry-after', op: w.operation, detail: `${w.name} got ${r.outcome} with Retry-After: ${r.retryAfter} at t=${r.answeredAtMs} ms and sent again at t=${next.atMs} ms, ${next.atMs - r.answeredAtMs} ms later (asked: ${asked})` });
        break;
      }
    }
  }
  return out;
}

/** SPEC §5's client checks: answers that say retrying cannot help. */
export const NON_RETRYABLE_STATUSES: ReadonlySet<number> = new Set([400, 401, 403, 404, 422]);

/**
 * `non-retryable`: after an answer that says retrying cannot help (400, 401,
 * 403, 404, 422), the same call of the client never sends the operation
 * (same method and path) again. A different request afterwards — a GET
 * that asks whether the operation took effect — is not a retry.
 */
function nonRetryableViolations(workers: ClientRun['workers']): Violation[] {
  const out: Violation[] = [];
  for (const w of workers) {
    for (const r of w.sent) {
      if (typeof r.outcome !== 'number' || !NON_RETRYABLE_STATUSES.has(r.outcome) || r.answeredAtMs === undefined) continue;
      const again = w.sent.find((q) => q !== r && q.atMs >= r.answeredAtMs! && q.method === r.method && q.path === r.path);
      if (again !== undefined) {
        out.push({ invariant: 'non-retryable', op: w.operation, detail: `${w.name} got HTTP ${r.outcome} at t=${r.answeredAtMs} ms (retrying cannot help) and sent ${again.method} ${again.path} again at t=${again.atMs} ms` });
        break;
      }
    }
  }
  return out;
}

/** Answered 2xx: the operation succeeded as far as this request saw. */
export const answered2xx = (r: SentRequest) => typeof r.outcome === 'number' && r.outcome >= 200 && r.outcome <= 299;

/** The statuses outside 2xx a call's requests were answered. */
export function receivedRefusals(sent: readonly SentRequest[]): Set<number> {
  return new Set(sent.flatMap((r) => (typeof r.outcome === 'number' && !answered2xx(r) ? [r.outcome] : [])));
}

/**
 * Whether the value a call resolved with says the operation failed, as
 * clients that do not throw say it: `false`, or an object with `ok: false`
 * (a `Response`, a Result), `success: false`, a numeric `status` outside
 * 2xx (the last `Response` a fetch-retry wrapper hands back), or an `error`;
 * or the status itself, one of `refusals` (those the call was answered
 * outside 2xx: `return res.status`) or 0 (no answer), or a list holding
 * such a report (a hedging client's statuses).
 */
export function reportsFailure(value: unknown, refusals: ReadonlySet<number> = new Set()): boolean {
  if (value === false) return true;
  // 0 is fetch's own status for no answer at all (`Response.error().status`).
  if (typeof value === 'number') return value === 0 || refusals.has(value);
  if (Array.isArray(value)) return value.some((x) => reportsFailure(x, refusals));
  if (value === null || typeof value !== 'object') return false;
  try {
    const o = value as { ok?: unknown; success?: unknown; status?: unknown; error?: unknown };
    if (o.ok === false || o.success === false) return true;
    if (typeof o.status === 'number' && (o.status < 200 || o.status > 299)) return true;
    return o.error !== undefined && o.error !== null && o.error !== false;
  } catch {
    return false; // a getter that throws says nothing
  }
}

/**
 * The operation's own requests (its method and path, any query string
 * aside) are its attempts; a GET asking whether it took effect, without the
 * key, is not a retry with another key (stable-key), nor an answer to it.
 * One predicate for the simulation and the flaky lab's wall clock.
 */
export function isAttemptOf(endpoint: { method: string; path: string }): (r: SentRequest) => boolean {
  const method = endpoint.method.toUpperCase();
  return (r) => r.method === method && r.path.split('?')[0] === endpoint.path.split('?')[0];
}

/**
 * `exactly-one` (1: "not 0 once the client saw success") as a call's own
 * caller sees it: a call that resolves — with nothing, or a value that does
 * not report a failure ({@link reportsFailure}: not a 409 handed back, as
 * `res.status` or a `Response`) — tells its caller its
 * operation was done. When it never got a 2xx for the operation and the
 * operation has no effect at the end, its caller was told something false:
 * a client that reads 409 "in progress" as "already done" while the first
 * attempt dies (until 2026-12 such a client held: only a 2xx with an id
 * counted as success). A call that cannot say it succeeded throws, or
 * resolves with a value saying so.
 */
export function resolvedWithoutEffect(w: ClientRun['workers'][number], effects: number, noun: string, isAttempt: (r: SentRequest) => boolean): Violation | undefined {
  if (w.outcome !== 'resolved' || w.reportedFailure || effects !== 0) return undefined;
  const mine = w.sent.filter(isAttempt);
  if (mine.length === 0 || mine.some(answered2xx)) return undefined;
  const last = mine[mine.length - 1]!;
  const what = last.outcome === undefined ? 'no answer yet' : typeof last.outcome === 'number' ? `${last.outcome}` : last.outcome.replace('_', ' ');
  return {
    invariant: 'exactly-one',
    op: w.operation,
    detail: `${w.name} resolved at t=${w.endMs} ms, telling its caller the ${noun} was made, with no 2xx answer (its last request: ${what}), but no ${noun} exists — a call that cannot say its operation took effect should throw (or resolve with ok: false)`,
  };
}

/** SPEC §5's client checks: answers a client retries, only with backoff (with the transport failures and timeouts). */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 409, 429, 500, 502, 503, 504]);

/** Retries after retryable outcomes, all without a wait, from which a call breaks `backoff`. */
export const BACKOFF_MIN_RETRIES = 3;

/**
 * `backoff`: a call that retried its operation (same method and path, the
 * query aside) at least {@link BACKOFF_MIN_RETRIES} times after retryable
 * outcomes — 408, 409, 429, 500, 502, 503, 504, a reset or refused
 * connection, a timeout, its own abort — and never waited before any of them
 * (each sent at the very instant the outcome reached it: 0 ms of virtual
 * time, it never slept) hammers the service it should give room to
 * recover (a refused connection during a restart is met with a burst).
 * Every retry must be immediate, not most: one immediate retry (a stale
 * keep-alive's reset) before backed-off ones is fine, and a Full-Jitter
 * client draws a 0 ms sleep rarely, so every one of three or more is as
 * good as never (the fixed example client and a Full-Jitter fixture hold
 * 300 runs). A retry after an answer with `Retry-After` is not
 * counted: the server named the wait (0 included), and `retry-after`
 * judges it. A request sent before the outcome arrived (a hedge) is not a
 * retry after it.
 */
function backoffViolations(workers: ClientRun['workers']): Violation[] {
  const out: Violation[] = [];
  const request = (q: SentRequest) => `${q.method} ${q.path.split('?')[0]}`;
  const endOf = (q: SentRequest) => q.answeredAtMs ?? q.abortedAtMs;
  const retryable = (q: SentRequest) => typeof q.outcome === 'number' ? RETRYABLE_STATUSES.has(q.outcome) : q.outcome !== undefined;
  for (const w of workers) {
    const retries: Array<{ atMs: number; gapMs: number; after: string }> = [];
    w.sent.forEach((q, i) => {
      // The outcome it follows: the last one of the same request that had reached the call when it sent this one.
      let prev: SentRequest | undefined;
      for (const r of w.sent.slice(0, i)) {
        const end = endOf(r);
        if (request(r) === request(q) && end !== undefined && end <= q.atMs && (prev === undefined || end >= endOf(prev)!)) prev = r;
      }
      if (prev === undefined || !retryable(prev) || prev.retryAfter !== undefined) return;
      retries.push({ atMs: q.atMs, gapMs: q.atMs - endOf(prev)!, after: String(prev.outcome) });
    });
    if (retries.length < BACKOFF_MIN_RETRIES || retries.some((x) => x.gapMs !== 0)) continue;
    const after = [...new Set(retries.map((x) => x.after))];
    const what = after.every((x) => /^\d+$/.test(x)) ? `${after.join('/')} answers` : `${after.join('/')} outcomes`;
    out.push({ invariant: 'backoff', op: w.operation, detail: `${w.name} retried ${retries.length} times after ${what} without waiting: attempts at t=${retries.map((x) => x.atMs).join(', ')} ms` });
  }
  return out;
}

/**
 * `progress` for a retry client: every call sends at least one request.
 * Without it a client that throws before sending anything holds every
 * property here vacuously (nothing sent: no second key, no late request, no
 * duplicate effect).
 */
function silentViolations(workers: ClientRun['workers']): Violation[] {
  return workers.filter((w) => w.sent.length === 0).map((w) => ({
    invariant: 'progress' as const,
    op: w.operation,
    detail: `${w.name} ${w.outcome === 'rejected' ? `rejected (${w.error ?? 'no error'})` : w.outcome === 'stopped' ? 'was still waiting' : 'resolved'} at t=${w.endMs} ms without sending a request`,
  }));
}

function deadlineViolations(workers: ClientRun['workers'], deadlineMs: number): Violation[] {
  const out: Violation[] = [];
  for (const w of workers) {
    const by = w.startMs + deadlineMs;
    const late = w.sent.find((r) => r.atMs > by);
    if (w.outcome === 'stopped') out.push({ invariant: 'deadline', op: w.operation, detail: `${w.name} had not settled at t=${w.endMs} ms, past its deadline of ${deadlineMs} ms, after ${w.sent.length} request${w.sent.length === 1 ? '' : 's'}: still retrying or waiting (stopped there)` });
    else if (w.endMs > by) out.push({ invariant: 'deadline', op: w.operation, detail: `${w.name} settled at t=${w.endMs} ms, ${w.endMs - w.startMs} ms after it started; its deadline is ${deadlineMs} ms` });
    else if (late) out.push({ invariant: 'deadline', op: w.operation, detail: `${w.name} sent a request at t=${late.atMs} ms, past its deadline of ${deadlineMs} ms` });
  }
  return out;
}
