import { describe, expect, it } from 'vitest';
import { decideRetry, retryLoop, type AttemptResult, type RetryLoopOptions } from './loop.js';
import { classifyGrpc, type GrpcCode } from './classify.js';
import { RetryBudget } from './budget.js';
import { TokenBucket } from './token-bucket.js';

const YES = { retry: true, reason: 'transient' } as const;

describe('decideRetry: the three checks', () => {
  const base = { decision: YES, attemptsMade: 1, maxAttempts: 3, remainingMs: 1000, backoffMs: 40 };
  it('retries when all three pass', () => expect(decideRetry(base)).toEqual({ retry: true, delayMs: 40 }));
  it('1. not retryable', () => expect(decideRetry({ ...base, decision: { retry: false, reason: 'NOT_FOUND' } })).toEqual({ retry: false, stop: 'not-retryable', reason: 'NOT_FOUND' }));
  it('2. attempts exhausted', () => expect(decideRetry({ ...base, attemptsMade: 3 })).toMatchObject({ retry: false, stop: 'attempts-exhausted' }));
  it('3. deadline: at least 50 ms must be left after the backoff', () => {
    expect(decideRetry({ ...base, remainingMs: 90, backoffMs: 40 })).toEqual({ retry: true, delayMs: 40 }); // exactly 50 left
    expect(decideRetry({ ...base, remainingMs: 89.9, backoffMs: 40 })).toMatchObject({ retry: false, stop: 'deadline' });
    expect(decideRetry({ ...base, remainingMs: 49, backoffMs: 0 })).toMatchObject({ retry: false, stop: 'deadline' });
    expect(decideRetry({ ...base, remainingMs: 60, backoffMs: 0, minAttemptMs: 70 })).toMatchObject({ retry: false, stop: 'deadline' });
    expect(decideRetry({ ...base, remainingMs: Infinity, backoffMs: 1e9 })).toMatchObject({ retry: true });
  });
  it('a server delay replaces the backoff and counts against the deadline', () => {
    expect(decideRetry({ ...base, decision: { ...YES, delayMs: 500 }, remainingMs: 549 })).toMatchObject({ retry: false, stop: 'deadline' });
    expect(decideRetry({ ...base, decision: { ...YES, delayMs: 500 }, remainingMs: 550 })).toEqual({ retry: true, delayMs: 500 });
  });
  it('checks in order: a non-retryable error on the last attempt says not-retryable', () => {
    expect(decideRetry({ ...base, decision: { retry: false, reason: 'x' }, attemptsMade: 3, remainingMs: 0 })).toMatchObject({ stop: 'not-retryable' });
  });
});

/** A loop on a plain virtual clock: each attempt takes `attemptMs`, answers from `codes` (undefined = success). */
function harness(codes: Array<GrpcCode | undefined>, o: Partial<RetryLoopOptions<string, GrpcCode>> & { attemptMs?: number } = {}) {
  let t = 0;
  const log: string[] = [];
  const opts: RetryLoopOptions<string, GrpcCode> = {
    maxAttempts: 5,
    now: () => t,
    sleep: async (ms) => {
      log.push(`sleep ${ms}`);
      t += ms;
    },
    attempt: async (n, remaining): Promise<AttemptResult<string, GrpcCode>> => {
      log.push(`attempt ${n} at ${t} (${remaining} left)`);
      t += o.attemptMs ?? 10;
      const c = codes[n - 1];
      return c === undefined ? { ok: true, value: `ok${n}` } : { ok: false, error: c };
    },
    classify: (code, budgetLeft) => classifyGrpc(code, { budgetLeft, idempotent: true }),
    backoffMs: (n) => 20 * n,
    ...o,
  };
  return { run: () => retryLoop(opts), log, now: () => t };
}

describe('retryLoop', () => {
  it('retries a transient failure and returns the value', async () => {
    const h = harness(['UNAVAILABLE', 'UNAVAILABLE', undefined]);
    expect(await h.run()).toEqual({ ok: true, value: 'ok3', attempts: 3 });
    expect(h.log).toEqual(['attempt 1 at 0 (Infinity left)', 'sleep 20', 'attempt 2 at 30 (Infinity left)', 'sleep 40', 'attempt 3 at 80 (Infinity left)']);
  });

  it('stops at once on a non-retryable code, returning it as a value', async () => {
    const r = await harness(['NOT_FOUND']).run();
    expect(r).toMatchObject({ ok: false, error: 'NOT_FOUND', attempts: 1, stop: 'not-retryable' });
  });

  it('stops after maxAttempts', async () => {
    const r = await harness(Array(9).fill('UNAVAILABLE'), { maxAttempts: 3 }).run();
    expect(r).toMatchObject({ ok: false, attempts: 3, stop: 'attempts-exhausted' });
  });

  it('stops when less than 50 ms of deadline would be left for the next attempt', async () => {
    // deadline 120: attempt 1 ends at 10, backoff 20 → 90 left (go); attempt 2 ends at 40, backoff 40 → 40 left (stop).
    const h = harness(Array(9).fill('UNAVAILABLE'), { deadlineAtMs: 120 });
    const r = await h.run();
    expect(r).toMatchObject({ ok: false, attempts: 2, stop: 'deadline' });
    expect(h.now()).toBe(40);
  });

  it('passes "budget left" to the classifier: DEADLINE_EXCEEDED with < 50 ms left is not retryable', async () => {
    const r = await harness(['DEADLINE_EXCEEDED', undefined], { deadlineAtMs: 55, attemptMs: 10 }).run();
    expect(r).toMatchObject({ ok: false, stop: 'not-retryable', reason: expect.stringMatching(/no budget/) });
  });

  it('honours a RESOURCE_EXHAUSTED pushback instead of its backoff', async () => {
    const h = harness(['RESOURCE_EXHAUSTED', undefined], {
      classify: (code) => classifyGrpc(code, { pushbackMs: 700 }),
    });
    expect(await h.run()).toMatchObject({ ok: true, attempts: 2 });
    expect(h.log).toContain('sleep 700');
  });

  it('a throttle that refuses ends the loop with stop = throttled; a success refunds the bucket', async () => {
    const empty = new TokenBucket({ capacity: 4 });
    expect(await harness(['UNAVAILABLE', undefined], { throttle: empty }).run()).toMatchObject({ ok: false, attempts: 1, stop: 'throttled' });
    const bucket = new TokenBucket({ capacity: 10 });
    expect(await harness(['UNAVAILABLE', undefined], { throttle: bucket }).run()).toMatchObject({ ok: true, attempts: 2 });
    expect(bucket.tokens(1000)).toBe(10); // 10 − 5 for the retry, + 5 refunded on its success
    const budget = new RetryBudget();
    expect(await harness(['UNAVAILABLE', undefined], { throttle: budget }).run()).toMatchObject({ stop: 'throttled' }); // 1 retry of 2 requests > 10 %
  });

  it('rejects a bad maxAttempts (a bug, not an outcome)', async () => {
    await expect(harness([], { maxAttempts: 0 }).run()).rejects.toThrow(RangeError);
  });
});
