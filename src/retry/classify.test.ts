import { describe, expect, it } from 'vitest';
import { GRPC_CODES, classifyGrpc, deliverySemantics, DeliverySemantics, isGrpcCode, type ClassifyContext, type GrpcCode } from './classify.js';

const ALL: ClassifyContext = { budgetLeft: true, idempotent: true, keyed: true, reread: true, provenTransient: true };

describe('classifyGrpc (SPEC §6)', () => {
  it('knows all seventeen gRPC codes', () => {
    expect(GRPC_CODES).toHaveLength(17);
    expect(isGrpcCode('UNAVAILABLE')).toBe(true);
    expect(isGrpcCode('unavailable')).toBe(false);
  });

  it.each(['INVALID_ARGUMENT', 'NOT_FOUND', 'PERMISSION_DENIED', 'UNAUTHENTICATED', 'FAILED_PRECONDITION', 'UNIMPLEMENTED', 'DATA_LOSS'] as GrpcCode[])(
    '%s is never retried, even with every favourable fact',
    (code) => {
      const d = classifyGrpc(code, ALL);
      expect(d.retry).toBe(false);
      expect(d.reason).toMatch(/never retried/);
    },
  );

  it.each(['OK', 'CANCELLED', 'ALREADY_EXISTS', 'OUT_OF_RANGE'] as GrpcCode[])('%s (not in the SPEC) is not retried either', (code) => {
    expect(classifyGrpc(code, ALL).retry).toBe(false);
  });

  it('UNAVAILABLE: yes only with budget left and idempotent or keyed', () => {
    expect(classifyGrpc('UNAVAILABLE', { budgetLeft: true, idempotent: true }).retry).toBe(true);
    expect(classifyGrpc('UNAVAILABLE', { budgetLeft: true, keyed: true })).toEqual({ retry: true, reason: expect.stringMatching(/keyed/) });
    expect(classifyGrpc('UNAVAILABLE', { budgetLeft: true }).reason).toMatch(/neither idempotent nor keyed/);
    expect(classifyGrpc('UNAVAILABLE', { idempotent: true, keyed: true }).reason).toMatch(/no budget/);
    expect(classifyGrpc('UNAVAILABLE').retry).toBe(false);
  });

  it('RESOURCE_EXHAUSTED: yes, and the server pushback replaces our backoff; a negative pushback means no', () => {
    expect(classifyGrpc('RESOURCE_EXHAUSTED')).toEqual({ retry: true, reason: expect.stringMatching(/no retry info/) });
    expect(classifyGrpc('RESOURCE_EXHAUSTED', { pushbackMs: 1500 })).toEqual({ retry: true, reason: expect.any(String), delayMs: 1500 });
    expect(classifyGrpc('RESOURCE_EXHAUSTED', { pushbackMs: 0 }).delayMs).toBe(0);
    expect(classifyGrpc('RESOURCE_EXHAUSTED', { pushbackMs: -1 }).retry).toBe(false);
    expect(classifyGrpc('RESOURCE_EXHAUSTED', { pushbackMs: NaN }).retry).toBe(false);
  });

  it('DEADLINE_EXCEEDED: only with budget left (and, our choice, idempotent or keyed)', () => {
    expect(classifyGrpc('DEADLINE_EXCEEDED', { budgetLeft: true, keyed: true }).retry).toBe(true);
    expect(classifyGrpc('DEADLINE_EXCEEDED', { budgetLeft: false, keyed: true, idempotent: true }).reason).toMatch(/no budget/);
    expect(classifyGrpc('DEADLINE_EXCEEDED', { budgetLeft: true }).reason).toMatch(/outcome unknown/);
  });

  it('ABORTED: only after re-reading', () => {
    expect(classifyGrpc('ABORTED', { budgetLeft: true, idempotent: true }).reason).toMatch(/re-reading/);
    expect(classifyGrpc('ABORTED', { reread: true }).retry).toBe(true);
  });

  it.each(['INTERNAL', 'UNKNOWN'] as GrpcCode[])('%s: no unless proven transient and idempotent', (code) => {
    expect(classifyGrpc(code, { budgetLeft: true, idempotent: true }).retry).toBe(false);
    expect(classifyGrpc(code, { budgetLeft: true, provenTransient: true, keyed: true }).retry).toBe(false);
    expect(classifyGrpc(code, { provenTransient: true, idempotent: true }).retry).toBe(true);
  });

  it('every code gets a non-empty reason in every context', () => {
    for (const code of GRPC_CODES) for (const ctx of [{}, ALL]) expect(classifyGrpc(code, ctx).reason.length).toBeGreaterThan(10);
  });
});

describe('delivery semantics', () => {
  it('no retry → at-most-once; retry → at-least-once; retry + key + dedup store → effectively-once', () => {
    expect(deliverySemantics({ retries: false, keyed: true, dedupStore: true })).toBe(DeliverySemantics.AtMostOnce);
    expect(deliverySemantics({ retries: true, keyed: false, dedupStore: true })).toBe('at-least-once');
    expect(deliverySemantics({ retries: true, keyed: true, dedupStore: false })).toBe('at-least-once');
    expect(deliverySemantics({ retries: true, keyed: true, dedupStore: true })).toBe('effectively-once');
  });
});
