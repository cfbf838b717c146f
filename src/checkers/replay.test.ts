import { describe, expect, test } from 'vitest';
import type { AttemptRecord } from '../harness/client.js';
import type { OperationEnd } from './invariants.js';
import { checkReplayEqualsFirst } from './replay.js';

/**
 * `replay-equals-first` (SPEC §5 invariant 6) on hand-built attempts: what
 * counts as "the first success", what may differ (headers, lost answers,
 * other keys) and what may not (status, body), and the sentence it prints.
 */

const ok = (over: Partial<AttemptRecord> = {}): AttemptRecord => ({
  toolUseId: 'toolu_r1_1', attempt: 1, key: 'k', title: 't', startMs: 0, endMs: 10, outcome: { kind: 'http', status: 201 }, replay: false, reportId: 1, body: '{"id":1}', ...over,
});
const op = (attempts: AttemptRecord[]): OperationEnd => ({ id: 'op1', runId: 'r1', tenant: 'default', keySource: 'tool_call', attempts, results: [] });

describe('checkReplayEqualsFirst', () => {
  test('a replay with the first status and body holds (the replay header is not compared)', () => {
    expect(checkReplayEqualsFirst(op([ok(), ok({ attempt: 2, endMs: 20, replay: true })]), [1])).toEqual([]);
  });

  test('a replay answered 200 {"ok":true} where the first was 201 {"id":1} fails, saying both', () => {
    const v = checkReplayEqualsFirst(op([ok(), ok({ attempt: 2, endMs: 20, replay: true, outcome: { kind: 'http', status: 200 }, body: '{"ok":true}', reportId: undefined })]), [1]);
    expect(v).toEqual([{
      invariant: 'replay-equals-first',
      op: 'op1',
      detail: `key 'k': attempt toolu_r1_1#2 (marked as a replay) was answered HTTP 200 {"ok":true} at t=20 ms, but the first success (attempt toolu_r1_1#1, t=10 ms) was HTTP 201 {"id":1}`,
    }]);
  });

  test('the status alone, or the body alone, differing is a violation', () => {
    expect(checkReplayEqualsFirst(op([ok(), ok({ attempt: 2, endMs: 20, outcome: { kind: 'http', status: 200 } })]), [1])).toHaveLength(1);
    expect(checkReplayEqualsFirst(op([ok(), ok({ attempt: 2, endMs: 20, body: '{"id":1,"replayed":true}' })]), [1])).toHaveLength(1);
  });

  test('one JSON value written another way (pretty-printed, keys reordered, 1.0 for 1) is the same body; another value, or a body that is no JSON, is compared byte for byte', () => {
    const first = ok({ body: '{\n  "id": 1,\n  "status": "accepted",\n  "total": 1.0\n}' });
    expect(checkReplayEqualsFirst(op([first, ok({ attempt: 2, endMs: 20, replay: true, body: '{"total":1,"status":"accepted","id":1}' })]), [1])).toEqual([]);
    // Until 2026-12 that failed; its message also broke the one-line output with the first body's line breaks.
    const other = checkReplayEqualsFirst(op([first, ok({ attempt: 2, endMs: 20, replay: true, body: '{"id":1,"status":"done","total":1}' })]), [1]);
    expect(other).toHaveLength(1);
    expect(other[0]!.detail).not.toContain('\n');
    expect(other[0]!.detail).toContain('was HTTP 201 {\\n  "id": 1,');
    expect(checkReplayEqualsFirst(op([ok({ body: 'ok ' }), ok({ attempt: 2, endMs: 20, body: 'ok' })]), [1])).toHaveLength(1);
  });

  test('"first" is the first answer received: a lost or failed first attempt does not count', () => {
    const lost = ok({ outcome: { kind: 'transport', reason: 'connection_closed' }, reportId: undefined, body: undefined, endMs: 5 });
    const busy = ok({ attempt: 2, outcome: { kind: 'http', status: 409 }, body: undefined, reportId: undefined, endMs: 8 });
    expect(checkReplayEqualsFirst(op([lost, busy, ok({ attempt: 3, endMs: 30, replay: true })]), [1])).toEqual([]);
  });

  test('ordered by arrival, not by worker: the earlier answer of a second worker is the first; at one instant, the non-replay', () => {
    const late = ok({ endMs: 50, outcome: { kind: 'http', status: 200 }, replay: true });
    const early = ok({ endMs: 40 });
    expect(checkReplayEqualsFirst(op([late, early]), [1])[0]!.detail).toMatch(/was answered HTTP 200 .* the first success .* was HTTP 201/);
    const tied = checkReplayEqualsFirst(op([ok({ endMs: 40, outcome: { kind: 'http', status: 200 }, replay: true }), ok({ endMs: 40 })]), [1]);
    expect(tied[0]!.detail).toMatch(/^key 'k': a concurrent worker's attempt toolu_r1_1#1 \(marked as a replay\) was answered HTTP 200/);
  });

  test('a replay that arrives before the answer it replays (the original\'s answer delayed) is named as the replay it is, where it is the first success', () => {
    const replayFirst = ok({ attempt: 2, endMs: 30, replay: true, outcome: { kind: 'http', status: 200 }, body: '{"id":1,"cached":true}' });
    const original = ok({ endMs: 60 });
    expect(checkReplayEqualsFirst(op([original, replayFirst]), [1])[0]!.detail).toBe(
      `key 'k': attempt toolu_r1_1#1 was answered HTTP 201 {"id":1} at t=60 ms, but the first success (attempt toolu_r1_1#2, marked as a replay, t=30 ms) was HTTP 200 {"id":1,"cached":true}`);
  });

  test('two differing successes at one instant, neither marked as a replay: both are named, neither is blamed as the later one', () => {
    const w0 = ok({ worker: 'op1.w0', endMs: 9, body: '{"id":1,"status":"created"}' });
    const w1 = ok({ worker: 'op1.w1', endMs: 9, body: '{"status":"replayed","id":1}' });
    expect(checkReplayEqualsFirst(op([w1, w0]), [1])[0]!.detail).toBe(
      `key 'k': two 2xx answers arrived at t=9 ms and differ: op1.w1's attempt toolu_r1_1#1 was answered HTTP 201 {"status":"replayed","id":1}, op1.w0's attempt toolu_r1_1#1 HTTP 201 {"id":1,"status":"created"}`);
  });

  test('the workers are named when known: two workers of one operation make the same call (call-1#1 twice)', () => {
    const v = checkReplayEqualsFirst(op([ok({ worker: 'op1.w1', endMs: 40, outcome: { kind: 'http', status: 200 } }), ok({ worker: 'op1.w0', endMs: 30 })]), [1]);
    expect(v[0]!.detail).toBe(`key 'k': op1.w1's attempt toolu_r1_1#1 was answered HTTP 200 {"id":1} at t=40 ms, but the first success (op1.w0's attempt toolu_r1_1#1, t=30 ms) was HTTP 201 {"id":1}`);
  });

  test('different keys are not compared (per-attempt keys, a model resubmission), nor attempts without a key', () => {
    expect(checkReplayEqualsFirst(op([ok({ key: 'a' }), ok({ key: 'b', endMs: 20, reportId: 2, body: '{"id":2}' })]), [1, 2])).toEqual([]);
    expect(checkReplayEqualsFirst(op([ok({ key: undefined }), ok({ key: undefined, endMs: 20, reportId: 2, body: '{"id":2}' })]), [1, 2])).toEqual([]);
  });

  test('two successes naming two effects of the operation are a duplicate, left to exactly-one; a phantom second id is not', () => {
    const second = ok({ attempt: 2, endMs: 20, reportId: 2, body: '{"id":2}' });
    expect(checkReplayEqualsFirst(op([ok(), second]), [1, 2])).toEqual([]);
    expect(checkReplayEqualsFirst(op([ok(), second]), [1])).toHaveLength(1);
  });
});
