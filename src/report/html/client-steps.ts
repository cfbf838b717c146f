import type { Violation } from '../../checkers/invariants.js';
import type { SentRequest } from '../../client/sim-fetch.js';
import type { RequestInfo } from './stepper-data.js';
import type { Lane, Step, ViolationAt } from './stepper-types.js';

/** One call of a user's retry client, as the client run records it (see `ClientRun.workers`). */
export interface ClientWorker {
  name: string;
  operation: string;
  startMs: number;
  endMs: number;
  sent: SentRequest[];
  outcome: 'resolved' | 'rejected' | 'stopped';
  error?: string;
}

/** A derived step and where it goes: before the step at index `beforeStep` (the end of the list: `steps.length`). */
interface Placed {
  step: Omit<Step, 'db'>;
  beforeStep: number;
}

/**
 * Adds the client's side of a user client's run to the stepper's steps: when
 * each call of the client starts, how long it waits on virtual time before
 * each retry (after what answer, and what Retry-After asked), and how its
 * call settles. The trace does not log these — a user's client runs on the
 * bridge's fake clock, not as kernel steps — so they are derived from the
 * run's own record of each call (its requests' send and answer times).
 */
export function withClientSteps(steps: readonly Step[], workers: readonly ClientWorker[], lanes: readonly Lane[], requests: ReadonlyMap<string, RequestInfo>, client: string): Step[] {
  const placed: Placed[] = [];
  // Each worker's request steps by time, in order: a request's own step is the first unused one at its time
  // (indexed once: a call that sent thousands of requests made the search quadratic, tens of seconds per page).
  const requestSteps = new Map<string, Map<number, number[]>>();
  steps.forEach((st, k) => {
    const worker = st.kind === 'request' ? requests.get(st.actor)?.worker : undefined;
    if (worker === undefined) return;
    const byTime = requestSteps.get(worker) ?? new Map<number, number[]>();
    requestSteps.set(worker, byTime);
    const list = byTime.get(st.t) ?? [];
    byTime.set(st.t, list);
    list.push(k);
  });
  for (const w of workers) {
    const lane = Math.max(0, lanes.findIndex((l) => l.id === w.name));
    const base = { actor: w.name, from: lane, line: '', kind: 'worker' as const };
    placed.push({ step: { ...base, t: w.startMs, event: 'start', text: `${w.name} starts: client '${client}' runs the operation` }, beforeStep: firstAtOrAfter(steps, w.startMs) });
    const own = requestSteps.get(w.name);
    w.sent.forEach((q, i) => {
      // The request's own step: the first unused one this worker put on the wire at that time (a request aborted before it was sent has none).
      const at = own?.get(q.atMs)?.shift() ?? -1;
      if (i === 0) return;
      const prev = w.sent[i - 1]!;
      const from = prev.answeredAtMs ?? prev.atMs;
      const after = prev.outcome === 'aborted' ? 'it gave up on its previous request (aborted)'
        : prev.outcome === undefined ? 'its previous request got no answer'
        : `its previous request ended in ${typeof prev.outcome === 'number' ? `HTTP ${prev.outcome}` : prev.outcome.replace(/_/g, ' ')}${prev.retryAfter !== undefined ? ` with Retry-After: ${prev.retryAfter}` : ''}`;
      const text = `${w.name} waits ${ms(q.atMs - from)} on virtual time after ${after}, then sends again`;
      placed.push({ step: { ...base, t: q.atMs, event: 'wait', text }, beforeStep: at >= 0 ? at : firstAtOrAfter(steps, q.atMs) });
    });
    const settled = w.outcome === 'resolved' ? 'resolves' : w.outcome === 'stopped' ? 'has not settled past its deadline and is stopped' : `rejects (${w.error ?? 'no error'})`;
    // Settling goes after every step up to its time (its last request's delivery is part of what it waited for).
    let end = steps.length;
    while (end > 0 && steps[end - 1]!.t > w.endMs) end--;
    placed.push({ beforeStep: end, step: { ...base, t: w.endMs, event: w.outcome, text: `${w.name}: the client's call ${settled} after ${w.sent.length} request${w.sent.length === 1 ? '' : 's'}, ${ms(w.endMs - w.startMs)} after it started` } });
  }
  const out: Step[] = [];
  const dbAt = (k: number) => (k > 0 ? steps[k - 1]!.db : steps[0]?.db ?? 0);
  // The placed steps before each step, in the order they were placed.
  const before = new Map<number, Placed[]>();
  for (const p of placed) {
    const list = before.get(p.beforeStep) ?? [];
    before.set(p.beforeStep, list);
    list.push(p);
  }
  for (let k = 0; k <= steps.length; k++) {
    for (const p of before.get(k) ?? []) out.push({ ...p.step, db: dbAt(k) });
    if (k < steps.length) out.push(steps[k]!);
  }
  return out;
}

/**
 * Pins a client run's violations to their steps: the client checks
 * (`deadline`, `retry-after`, `non-retryable`, `backoff`, `progress`) at the request
 * that breaks them or at the call's end; every other invariant as for any
 * run (`others`). The checks' details name the call first and the time of
 * the offending request last, as `run.ts` words them.
 */
export function pinClientViolations(violations: readonly Violation[], steps: readonly Step[], requests: ReadonlyMap<string, RequestInfo>, workers: readonly ClientWorker[], others: (vs: Violation[]) => ViolationAt[]): ViolationAt[] {
  return violations.map((v) => {
    // Every client check's detail names the call first (`op1.w0 got …`; stable-key: `call op1.w0 sent …`).
    const worker = workers.find((w) => v.detail.startsWith(`${w.name} `) || v.detail.startsWith(`call ${w.name} `));
    const at = (i: number, why: string): ViolationAt => ({ ...v, step: i < 0 ? steps.length - 1 : i, why: i < 0 ? 'the end state breaks it' : why });
    if (worker === undefined) return others([v])[0]!;
    const end = steps.findIndex((s) => s.kind === 'worker' && s.actor === worker.name && (s.event === 'resolved' || s.event === 'rejected' || s.event === 'stopped'));
    const sentAt = (t: number) => steps.findIndex((s) => s.kind === 'request' && s.t === t && requests.get(s.actor)?.worker === worker.name);
    const lastT = (): number => Number([...v.detail.matchAll(/t=([\d.]+) ms/g)].pop()?.[1] ?? NaN);
    switch (v.invariant) {
      case 'stable-key': {
        const first = worker.sent.find((q) => q.key !== undefined || q.outcome !== 'aborted');
        const other = worker.sent.find((q) => q !== first && q.key !== first?.key);
        return other === undefined ? others([v])[0]! : at(sentAt(other.atMs), `${worker.name} retries here with Idempotency-Key ${other.key ?? '(none)'}, not the ${first?.key ?? '(none)'} it sent first: the service cannot tell it is the same operation`);
      }
      case 'progress':
        return at(end, `${worker.name} settles here without having sent a request`);
      case 'deadline': {
        const late = /sent a request at t=([\d.]+) ms/.exec(v.detail);
        return late ? at(sentAt(Number(late[1])), `${worker.name} sends a request past its deadline here`) : at(end, `${worker.name} is still running here, past its deadline`);
      }
      case 'retry-after': {
        // The request's own time: the detail of an HTTP-date names the date's instant (`not before t=3000 ms`) after it.
        const again = /sent again at t=([\d.]+) ms/.exec(v.detail);
        return at(sentAt(again ? Number(again[1]) : lastT()), `${worker.name} sends again here, before the wait Retry-After asked for is over`);
      }
      case 'non-retryable':
        return at(sentAt(lastT()), `${worker.name} sends the operation again here, after an answer that says retrying cannot help`);
      case 'backoff': {
        // The last of the immediate retries the detail lists (`attempts at t=2, 4, 6 ms`): the one that settles it.
        const times = /attempts at t=([\d., ]+) ms$/.exec(v.detail)?.[1]?.split(', ').map(Number) ?? [];
        return at(times.length === 0 ? -1 : sentAt(times[times.length - 1]!), `${worker.name} retries here at the instant its previous attempt failed, again without waiting: ${times.length} retries, none backed off`);
      }
      case 'key-reuse': {
        const t = /at t=([\d.]+) ms, the key/.exec(v.detail);
        if (t) return at(sentAt(Number(t[1])), `${worker.name} sends here the key another operation already used: the service cannot tell the two operations apart`);
        const body = /at t=([\d.]+) ms with another body/.exec(v.detail);
        return body ? at(sentAt(Number(body[1])), `${worker.name} sends here its key with another body than before: the service takes it for a different request under a used key`) : others([v])[0]!;
      }
      default:
        return others([v])[0]!;
    }
  });
}

function firstAtOrAfter(steps: readonly Step[], t: number): number {
  const i = steps.findIndex((s) => s.t >= t);
  return i < 0 ? steps.length : i;
}

/** `101 ms`, `2.5 s`. */
function ms(x: number): string {
  return x >= 10_000 ? `${(x / 1000).toFixed(1)} s` : `${Math.round(x * 10) / 10} ms`;
}
