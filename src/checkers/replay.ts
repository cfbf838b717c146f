import type { AttemptRecord } from '../harness/client.js';
import type { EffectId } from '../service/definition.js';
import { hasId, sameId } from '../service/ids.js';
import type { OperationEnd, Violation } from './invariants.js';

/**
 * SPEC §5 invariant 6, `replay-equals-first`: under a stable key, every 2xx
 * answer an operation receives has the status and body of its first 2xx
 * answer (Stripe's documented contract; the IETF Idempotency-Key draft).
 * Only the answers the client actually received count — a lost answer was
 * never seen, so a lost first answer followed by a replay is fine. Headers
 * are not compared: the ones that may differ are exactly those that mark a
 * replay (`Idempotent-Replay`, `Age`, ...).
 *
 * Judged per key within an operation (attempts without a key — key source
 * `none` — have no replay contract; per-attempt keys give each key one
 * attempt, so nothing to compare). Two 2xx answers that acknowledge two
 * different effects of one operation are a duplicate, which invariant 1
 * (`exactly-one`) already names; they are left to it so one cause gets one
 * name, and a canary named for `exactly-one` still says just that.
 *
 * `effects` are the operation's effect ids at the end of the run.
 */
export function checkReplayEqualsFirst(op: OperationEnd, effects: readonly EffectId[]): Violation[] {
  const byKey = new Map<string, AttemptRecord[]>();
  for (const a of op.attempts) {
    if (a.key === undefined || a.outcome.kind !== 'http' || a.outcome.status < 200 || a.outcome.status >= 300 || a.body === undefined) continue;
    const list = byKey.get(a.key);
    if (list === undefined) byKey.set(a.key, [a]);
    else list.push(a);
  }
  const out: Violation[] = [];
  for (const [key, list] of byKey) {
    if (list.length < 2) continue;
    // The first answer *received*: workers' attempts are listed worker by worker, so order by arrival; at the
    // same instant an answer the service marked as a replay cannot be the first one.
    const sorted = [...list].sort((x, y) => x.endMs - y.endMs || Number(x.replay) - Number(y.replay));
    const first = sorted[0]!;
    const status = (a: AttemptRecord) => (a.outcome.kind === 'http' ? a.outcome.status : 0);
    for (const a of sorted.slice(1)) {
      if (status(a) === status(first) && sameBody(a.body!, first.body!)) continue;
      const duplicate = first.reportId !== undefined && a.reportId !== undefined && !sameId(first.reportId, a.reportId) && effects.length > 1 && hasId(effects, first.reportId) && hasId(effects, a.reportId);
      if (duplicate) continue;
      const label = (x: AttemptRecord) => `${x.toolUseId}#${x.attempt}`;
      // Two workers of one operation make the same call: the worker says whose attempt it was.
      const named = (x: AttemptRecord) => (x.worker === undefined ? `attempt ${label(x)}` : `${x.worker}'s attempt ${label(x)}`);
      const who = a.worker === undefined && label(a) === label(first) ? `a concurrent worker's attempt ${label(a)}` : named(a);
      // At one instant neither is known to be the first (the service marked no replay): say both, blaming neither.
      const tied = a.endMs === first.endMs && !a.replay && !first.replay;
      out.push({
        invariant: 'replay-equals-first',
        op: op.id,
        detail: tied
          ? `key '${key}': two 2xx answers arrived at t=${a.endMs.toFixed(0)} ms and differ: ${named(first)} was answered HTTP ${status(first)} ${clip(first.body!)}, ${who} HTTP ${status(a)} ${clip(a.body!)}`
          : `key '${key}': ${who}${a.replay ? ' (marked as a replay)' : ''} was answered HTTP ${status(a)} ${clip(a.body!)} at t=${a.endMs.toFixed(0)} ms, but the first success (${named(first)}${first.replay ? ', marked as a replay' : ''}, t=${first.endMs.toFixed(0)} ms) was HTTP ${status(first)} ${clip(first.body!)}`,
      });
      break; // one sentence per key says it
    }
  }
  return out;
}

/**
 * The same answer body: the same bytes, or two JSON texts of one value
 * (whitespace, key order and number spelling aside) — a replay stored
 * pretty-printed and served through SQLite's json() is what the client read
 * the first time (it "failed" replay-equals-first until 2026-12, while
 * request bodies were already compared in canonical form).
 */
export function sameBody(a: string, b: string): boolean {
  if (a === b) return true;
  const x = jsonOf(a);
  const y = jsonOf(b);
  return x !== undefined && y !== undefined && canonical(x) === canonical(y);
}

function jsonOf(text: string): { v: unknown } | undefined {
  try {
    return { v: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

function canonical(x: { v: unknown }): string {
  const sort = (v: unknown): unknown => (Array.isArray(v) ? v.map(sort) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])])) : v);
  return JSON.stringify(sort(x.v));
}

/** A body in one line of a message: its line breaks written as \n, at most 120 characters. */
function clip(body: string): string {
  const one = body.replace(/\r?\n/g, '\\n');
  return one.length <= 120 ? one : `${one.slice(0, 117)}...`;
}
