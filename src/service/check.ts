import type { OperationEnd, Violation } from '../checkers/invariants.js';
import type { EffectId, EffectOwner, ServiceDb, ServiceDefinition } from './definition.js';
import { describeThrow, ServiceError } from './errors.js';
import { checkReplayEqualsFirst } from '../checkers/replay.js';
import { plural } from './noun.js';
import type { RecoveryOutcome } from '../checkers/progress.js';
import type { Endpoint } from '../harness/client.js';
import { hasId, isEffectId, showId, valueText } from './ids.js';

/** The ids of one operation's effects, through the definition (a bad answer is a {@link ServiceError}). */
export function effectsOf(def: ServiceDefinition, db: ServiceDb, op: Pick<OperationEnd, 'runId' | 'tenant'>): EffectId[] {
  let ids: unknown;
  try {
    ids = def.effects.of(db, { runId: op.runId, tenant: op.tenant });
  } catch (e) {
    if (e instanceof ServiceError) throw e; // already one line about the definition (an app descriptor's of and owner disagreeing)
    throw new ServiceError(def.name, `effects.of threw ${describeThrow(e)}`);
  }
  if (!Array.isArray(ids)) {
    throw new ServiceError(def.name, `effects.of must return an array of ids (numbers or non-empty strings), got ${valueText(ids)}`);
  }
  // Named by the element at fault: in a list of UUIDs, the one null (a row
  // whose id column was never set) is what the user has to find.
  const bad = ids.findIndex((x) => !isEffectId(x));
  if (bad >= 0) {
    // A first effects.of is often `SELECT id … .all()`: rows of one id each, where the ids were meant.
    const row = ids[bad] as unknown;
    const oneId = typeof row === 'object' && row !== null && !Array.isArray(row) && Object.keys(row).length === 1 && isEffectId(Object.values(row)[0]);
    const hint = oneId ? " (a row, not its id: return the id itself, e.g. with better-sqlite3's .pluck())" : '';
    throw new ServiceError(def.name, `effects.of must return an array of ids (numbers or non-empty strings), got ${valueText(row)}${hint} at index ${bad} of ${valueText(ids)} for operation ${op.runId} of tenant '${op.tenant}'`);
  }
  // of and owner are two readings of one database; when they disagree the definition, not the service, is
  // wrong: an of that ignores op.tenant counts another tenant's effect too, and a correct service "failed"
  // exactly-one (until 2026-12 for a service; an app descriptor was refused so). Only a list of two or more
  // is asked (the hot path of a holding campaign is one id): a wrong of shows as a duplicate there.
  if (ids.length > 1) ownerAgrees(def, db, op, ids as EffectId[]);
  return ids as EffectId[];
}

/** Refuses an effects.of that counted, for `op`, an effect effects.owner gives to another run or tenant (see {@link effectsOf}). */
function ownerAgrees(def: ServiceDefinition, db: ServiceDb, op: Pick<OperationEnd, 'runId' | 'tenant'>, ids: readonly EffectId[]): void {
  if (def.effects.owner === undefined) return;
  for (const id of ids) {
    const o = ownerOf(def, db, id);
    if (o !== undefined && (o.runId !== op.runId || o.tenant !== op.tenant)) {
      throw new ServiceError(def.name, `effects.of counted ${def.effects.noun ?? 'effect'} ${showId(id)} for operation ${op.runId} of tenant '${op.tenant}', but effects.owner says it is ${o.runId}'s of tenant '${o.tenant}': of must return only the operation's own (filter by op.runId and op.tenant)${o.tenant !== op.tenant ? "; a service that has no tenants (it never reads the x-tenant header) is checked without them: leave 'tenants' out of --faults" : ''}`);
    }
  }
}

/**
 * SPEC §5's invariants over a user service, judged only through its
 * declared effects (the checkers read; they never inject faults):
 * exactly one effect per logical operation (never two; not zero once the
 * client saw success), every acknowledged id exists and is this operation's
 * (another tenant's is a tenant-isolation breach), every attempt of a tool
 * call carried the same key, a key reused with another body was refused,
 * and every 2xx answer under one key repeated the first (invariant 6).
 */
export function checkServiceInvariants(def: ServiceDefinition, db: ServiceDb, ops: readonly OperationEnd[]): { reports: Record<string, number>; violations: Violation[] } {
  const violations: Violation[] = [];
  const reports: Record<string, number> = {};
  const noun = def.effects.noun ?? 'effect';
  /** Which operation's list each id was in: one id in two lists is one effect two operations count (two tenants sending one raw key). */
  const listedBy = new Map<string, Pick<OperationEnd, 'runId' | 'tenant'>>();
  for (const op of ops) {
    const ids = effectsOf(def, db, op);
    reports[op.id] = ids.length;
    for (const id of ids) {
      const k = `${typeof id}:${id}`;
      const other = listedBy.get(k);
      // A single id escapes effectsOf's check (it asks lists of two or more): an of that ignores op.tenant
      // counted the other tenant's effect as this one's, the answer carrying it looked like its own, and a
      // service that gives one tenant another's result held tenant-isolation (until 2026-12).
      if (other !== undefined) {
        ownerAgrees(def, db, other, [id]);
        ownerAgrees(def, db, op, [id]);
      } else listedBy.set(k, op);
    }
    const sawSuccess = op.results.some((r) => r.kind === 'success');
    // 1. exactly one effect: never two, and not zero once the client saw success.
    if (ids.length > 1) violations.push({ invariant: 'exactly-one', op: op.id, detail: `${ids.length} ${plural(noun)} (ids ${ids.map(showId).join(', ')}) for one logical operation` });
    else if (ids.length === 0 && sawSuccess) {
      // Handed another operation's effect (another tenant's, under an unscoped key): "no order exists" read as if none did.
      const given = op.attempts.find((a) => a.reportId !== undefined && ownerOf(def, db, a.reportId) !== undefined)?.reportId;
      violations.push({ invariant: 'exactly-one', op: op.id, detail: given === undefined ? `the client was told it succeeded, but no ${noun} exists` : `the client was told it succeeded, but no ${noun} of its own exists (it was handed ${noun} ${showId(given)}, another operation's)` });
    }
    // 2 and 4. Every id handed to the client exists and is this operation's.
    for (const a of op.attempts) {
      if (a.reportId === undefined || hasId(ids, a.reportId)) continue;
      const owner = ownerOf(def, db, a.reportId);
      const id = showId(a.reportId);
      if (owner !== undefined && owner.tenant !== op.tenant) {
        violations.push({ invariant: 'tenant-isolation', op: op.id, detail: `tenant '${op.tenant}' received ${noun} ${id} of tenant '${owner.tenant}'` });
      } else if (owner !== undefined) {
        violations.push({ invariant: 'id-exists', op: op.id, detail: notListed(noun, id, owner, op.runId) });
      } else {
        const why = def.effects.owner === undefined ? `which is not one of this operation's ${plural(noun)}` : 'which does not exist';
        violations.push({ invariant: 'id-exists', op: op.id, detail: `${a.worker === undefined ? 'attempt' : `${a.worker}'s attempt`} ${a.toolUseId}#${a.attempt} was given ${noun} id ${id}, ${why}` });
      }
    }
    // 3. Within one tool call, every attempt carried the same key.
    if (op.keySource !== 'none') {
      const byCall = new Map<string, Set<string | undefined>>();
      for (const a of op.attempts) byCall.set(a.toolUseId, (byCall.get(a.toolUseId) ?? new Set()).add(a.key));
      for (const [call, keys] of byCall) {
        if (keys.size > 1) violations.push({ invariant: 'stable-key', op: op.id, detail: `call ${call} sent ${keys.size} different keys across its attempts` });
      }
    }
    // 6. Under one key, every 2xx answer is the first one again.
    for (const v of checkReplayEqualsFirst(op, ids)) violations.push(v);
    // The key-reuse probe: the same key with another body must be refused.
    // A 5xx refuses nothing: it tells the client to retry (SPEC §4), and the
    // other body is neither done nor refused (a handler that throws on it);
    // the probe sent it again first, so a fault that struck it is behind it.
    for (const p of op.probes ?? []) {
      if (typeof p.outcome === 'number' && p.outcome >= 200 && p.outcome < 300) {
        violations.push({ invariant: 'key-reuse', op: op.id, detail: `key '${p.key}' sent again with a different body was accepted (HTTP ${p.outcome}), not refused` });
      } else if (typeof p.outcome === 'number' && p.outcome >= 500) {
        violations.push({ invariant: 'key-reuse', op: op.id, detail: `key '${p.key}' sent again with a different body was answered HTTP ${p.outcome} each of the times it was sent, a server error a client retries, not a refusal (422)` });
      }
    }
  }
  return { reports, violations };
}

/**
 * Invariants 2 and 4 on the recovery phase's answers: "no request *ever*
 * receives another tenant's result" covers the resubmissions after the
 * faults stopped too. Without it an unscoped key whose leak showed only
 * there (the main run's answers all lost or killed) was reported as
 * `progress` ("succeeded, but 0 effects"), never as the tenant breach it is.
 */
export function checkRecoveryAnswers(def: ServiceDefinition, db: ServiceDb, ops: readonly OperationEnd[], outcomes: ReadonlyMap<string, Pick<RecoveryOutcome, 'body' | 'headers'> & { kind: string }>, resultId: Endpoint['resultId'], effects: (op: OperationEnd) => readonly EffectId[] = (op) => effectsOf(def, db, op)): Violation[] {
  const out: Violation[] = [];
  const noun = def.effects.noun ?? 'effect';
  for (const op of ops) {
    const rec = outcomes.get(op.id);
    if (rec?.kind !== 'success' || rec.body === undefined) continue;
    const id = resultId(rec.body, rec.headers ?? {});
    if (id === undefined || hasId(effects(op), id)) continue;
    const owner = ownerOf(def, db, id);
    if (owner === undefined) continue; // no effect of another operation: progress says what is missing
    if (owner.tenant !== op.tenant) out.push({ invariant: 'tenant-isolation', op: op.id, detail: `tenant '${op.tenant}' received ${noun} ${showId(id)} of tenant '${owner.tenant}' (its resubmission after the faults stopped)` });
    else out.push({ invariant: 'id-exists', op: op.id, detail: `${notListed(noun, showId(id), owner, op.runId)} (its resubmission after the faults stopped)` });
  }
  return out;
}

// An id effects.owner gives to this very run, that effects.of does not list (a row
// written, the effect it stands for not: work a kill lost after the answer) read
// "belongs to run 'run-1', not 'run-1'": say which of the two declarations disagree.
function notListed(noun: string, id: string, owner: EffectOwner, runId: string): string {
  if (owner.runId === runId) return `${noun} ${id} is run '${runId}''s by effects.owner, but effects.of does not list it`;
  return `${noun} ${id} belongs to run '${owner.runId}', not '${runId}'`;
}

function ownerOf(def: ServiceDefinition, db: ServiceDb, id: EffectId): EffectOwner | undefined {
  if (def.effects.owner === undefined) return undefined;
  let o: unknown;
  try {
    o = def.effects.owner(db, id);
  } catch (e) {
    throw new ServiceError(def.name, `effects.owner threw ${describeThrow(e)}`);
  }
  // better-sqlite3's .get() says "no row" with undefined; null means the same to a reader.
  if (o === undefined || o === null) return undefined;
  const r = o as { runId?: unknown; tenant?: unknown };
  if (typeof o !== 'object' || typeof r.runId !== 'string' || typeof r.tenant !== 'string') {
    throw new ServiceError(def.name, `effects.owner must return { runId, tenant } (strings) or undefined when no effect has the id, got ${valueText(o)} for id ${valueText(id)}`);
  }
  return { runId: r.runId, tenant: r.tenant };
}
