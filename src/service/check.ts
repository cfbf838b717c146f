import type { OperationEnd, Violation } from '../checkers/invariants.js';
import type { ServiceDb, ServiceDefinition } from './definition.js';
import { describeThrow, ServiceError } from './errors.js';

function effectsOf(def: ServiceDefinition, db: ServiceDb, op: OperationEnd): number[] {
  let ids: unknown;
  try {
    ids = def.effects.of(db, { runId: op.runId, tenant: op.tenant });
  } catch (e) {
    throw new ServiceError(def.name, `effects.of threw ${describeThrow(e)}`);
  }
  if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'number')) {
    throw new ServiceError(def.name, `effects.of must return an array of numeric ids, got ${JSON.stringify(ids)?.slice(0, 80)}`);
  }
  return ids as number[];
}

/**
 * SPEC §5's invariants over a user service, judged only through its
 * declared effects (the checkers read; they never inject faults):
 * exactly one effect per logical operation (never two; not zero once the
 * client saw success), every acknowledged id exists and is this operation's
 * (another tenant's is a tenant-isolation breach), every attempt of a tool
 * call carried the same key, and a key reused with another body was refused.
 */
export function checkServiceInvariants(def: ServiceDefinition, db: ServiceDb, ops: readonly OperationEnd[]): { reports: Record<string, number>; violations: Violation[] } {
  const violations: Violation[] = [];
  const reports: Record<string, number> = {};
  for (const op of ops) {
    const ids = effectsOf(def, db, op);
    reports[op.id] = ids.length;
    const sawSuccess = op.results.some((r) => r.kind === 'success');
    if (ids.length > 1) violations.push({ invariant: 'exactly-one', op: op.id, detail: `${ids.length} effects (ids ${ids.join(', ')}) for one logical operation` });
    else if (ids.length === 0 && sawSuccess) violations.push({ invariant: 'exactly-one', op: op.id, detail: 'the client was told it succeeded, but no effect exists' });
    for (const a of op.attempts) {
      if (a.reportId === undefined || ids.includes(a.reportId)) continue;
      const owner = def.effects.owner?.(db, a.reportId);
      if (owner !== undefined && owner.tenant !== op.tenant) {
        violations.push({ invariant: 'tenant-isolation', op: op.id, detail: `tenant '${op.tenant}' was given effect ${a.reportId} of tenant '${owner.tenant}'` });
      } else {
        violations.push({ invariant: 'id-exists', op: op.id, detail: owner === undefined ? `attempt ${a.toolUseId}#${a.attempt} was given id ${a.reportId}, which is not an effect of this operation` : `id ${a.reportId} belongs to '${owner.runId}', not '${op.runId}'` });
      }
    }
    if (op.keySource !== 'none') {
      const byCall = new Map<string, Set<string | undefined>>();
      for (const a of op.attempts) byCall.set(a.toolUseId, (byCall.get(a.toolUseId) ?? new Set()).add(a.key));
      for (const [call, keys] of byCall) {
        if (keys.size > 1) violations.push({ invariant: 'stable-key', op: op.id, detail: `tool call ${call} sent ${keys.size} different keys across its attempts` });
      }
    }
    for (const p of op.probes ?? []) {
      if (typeof p.outcome === 'number' && p.outcome >= 200 && p.outcome < 300) {
        violations.push({ invariant: 'key-reuse', op: op.id, detail: `key '${p.key}' sent again with a different body was accepted (HTTP ${p.outcome}), not refused` });
      }
    }
  }
  return { reports, violations };
}
