import { situationsOf, type Coverage, type Situation } from '../campaign/coverage.js';
import type { FaultKind } from '../scenario/arbitraries.js';
import type { ServiceDefinition } from '../service/definition.js';
import { SPANS, type Reached } from '../service/reached.js';
import type { ClientRun } from './run.js';
import { answerLine } from '../service/errors.js';
import { answered2xx } from './checks.js';

/** Answers that say retrying cannot help (SPEC §6), as `non-retryable` judges them. */
const NON_RETRYABLE = new Set([400, 401, 403, 404, 422]);

/**
 * What a retry client met in a campaign (DESIGN invariant 9: a green says
 * what it covered), first in the client's own terms — the answers and
 * failures its retry logic branches on, and what it did about them — then
 * the service's situations under the same faults. A client that held while
 * no run timed it out, or sent it a 429, says so.
 */
const CLIENT_SITUATIONS: ReadonlyArray<Situation & { needs?: FaultKind }> = [
  { id: 'client:succeeded', what: 'a request answered 2xx' },
  { id: 'client:aborted', what: 'a request the client gave up on (its own timeout)' },
  { id: 'client:transport', what: 'a reset or refused connection' },
  { id: 'client:retryable', what: 'an answer 408, 409, 429 or 5xx' },
  { id: 'client:retry-after', what: 'an answer with Retry-After', needs: 'throttle' },
  { id: 'client:non-retryable', what: 'an answer 400, 401, 403, 404 or 422', needs: 'answer' },
  { id: 'client:same-content', what: 'two operations with the same content (bodies that differ only in their id)', needs: 'sameContent' },
  { id: 'client:same-instant', what: 'two operations started in the same millisecond', needs: 'sameInstant' },
  { id: 'client:retried', what: 'a call that sent its operation again' },
  { id: 'client:gave-up', what: 'a call that settled without a success' },
];

/**
 * Every situation a client campaign over `faults` against `def` can reach.
 * `space.slowAtAnyStep`: the slow fault lands after any step (a user's
 * service, or the exhaustive search's small scenarios), not only at the
 * service's `slowStep`; `space.killAtAnswer`: kills also land as an answer
 * leaves (generated for a user's service). `deadlineMs`: the client's.
 */
export function clientSituationsOf(def: ServiceDefinition, faults: readonly FaultKind[], space: { slowAtAnyStep: boolean; killAtAnswer: boolean }, deadlineMs: number): Situation[] {
  const own = CLIENT_SITUATIONS.filter((s) => s.needs === undefined || faults.includes(s.needs)).map(({ id, what }) => ({ id, what }));
  // A client run has no recovery phase (the client itself is what recovers),
  // and lasts until its calls settle: a span that starts past the client's
  // deadline is one a correct client never has.
  const beyond = new Set<string>(SPANS.filter((x, i) => i > 0 && SPANS[i - 1]!.maxMs >= deadlineMs).map((x) => x.id));
  const service = situationsOf({ def, faults, keySource: 'tool_call', ...space }).filter((s) => !s.id.startsWith('recovery:') && !beyond.has(s.id));
  return [...own, ...service];
}

/** Adds what the client's calls met and did in one run. */
export function noteClientRun(r: Reached, workers: ClientRun['workers'], operations: ReadonlyArray<{ title: string; startMs?: number }> = []): void {
  if (operations.length >= 2 && operations.every((op) => op.title === operations[0]!.title)) r.add('client:same-content');
  if (operations.length >= 2 && operations.every((op) => op.startMs === operations[0]!.startMs)) r.add('client:same-instant');
  for (const w of workers) {
    if (w.sent.length > 1) r.add('client:retried');
    if (w.outcome === 'rejected') r.add('client:gave-up');
    for (const q of w.sent) {
      const o = q.outcome;
      if (o === 'aborted' || o === 'timeout') r.add('client:aborted');
      else if (o === 'connection_closed' || o === 'connection_refused') r.add('client:transport');
      else if (typeof o === 'number') {
        if (o >= 200 && o < 300) r.add('client:succeeded');
        if (NON_RETRYABLE.has(o)) r.add('client:non-retryable');
        if (o === 408 || o === 409 || o === 429 || o >= 500) r.add('client:retryable');
      }
      if (q.retryAfter !== undefined) r.add('client:retry-after');
    }
  }
}

/**
 * Why a holding client campaign says nothing, when no request of any run
 * was answered 2xx: a client whose requests never succeed (a wrong path,
 * method, header or body, every one refused) sends no duplicate and reuses
 * no key, so it keeps every check vacuously. Undefined when some run
 * succeeded (or the coverage does not count it).
 */
export function neverSucceeded(coverage: Coverage | undefined, what: string, firstAnswer?: string): string | undefined {
  const row = coverage?.rows.find((x) => x.id === 'client:succeeded');
  if (coverage === undefined || coverage.runs === 0 || row === undefined || row.runs > 0) return undefined;
  // What came back, quoted: a wrong path's 404 says more than "serve it and see".
  const first = firstAnswer === undefined ? '' : ` (the first: ${firstAnswer})`;
  return `${NEVER_SUCCEEDED} of the ${coverage.runs} ${what} was answered 2xx${first}, and a client that never succeeds keeps every check vacuously; serve the service for real (retrysim serve) and point the client at it to see what it sends and what comes back`;
}

const NEVER_SUCCEEDED = 'no request';

/**
 * The first request of a run that came back without a 2xx, in one line:
 * `op1.w0 POST /v2/items → 404 {"error":"no route"}`. The service's own
 * answers first: a fault's canned 404 or 429 in front of it says nothing of
 * why the client never succeeds; then those, and transport failures
 * (`→ connection_refused`, `→ aborted`). Undefined when every request was
 * answered 2xx. The same preference across runs: {@link preferRefusal}.
 */
export function firstRefusal(workers: ClientRun['workers']): Refusal | undefined {
  const refused = workers
    .flatMap((w) => w.sent.map((q) => ({ w: w.name, q })))
    .filter(({ q }) => q.outcome !== undefined && !answered2xx(q))
    .sort((a, b) => a.q.atMs - b.q.atMs);
  const own = refused.find(({ q }) => typeof q.outcome === 'number' && q.injected !== true);
  const pick = own ?? refused[0];
  if (pick === undefined) return undefined;
  const { w, q } = pick;
  return { line: `${w} ${q.method} ${q.path} → ${typeof q.outcome === 'number' ? answerLine(q.outcome, q.answer, 160) : q.outcome}`, own: own !== undefined };
}

/** A request that came back without a 2xx; `own`: the service answered it (not a fault, not the transport). */
export interface Refusal {
  line: string;
  own: boolean;
}

/** The refusal a campaign quotes: the first the service itself answered, else the first of any kind. */
export function preferRefusal(kept: Refusal | undefined, next: Refusal | undefined): Refusal | undefined {
  if (kept === undefined) return next;
  return !kept.own && next?.own === true ? next : kept;
}

/** Whether an inconclusive reason is {@link neverSucceeded}'s (more runs would not conclude it). */
export function isNeverSucceeded(reason: string | undefined): boolean {
  return reason?.startsWith(`${NEVER_SUCCEEDED} of the `) === true;
}
