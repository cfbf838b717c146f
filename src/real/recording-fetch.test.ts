import { describe, expect, it } from 'vitest';
import { recordingFetch } from './flaky-client.js';
import type { SentRequest } from '../client/sim-fetch.js';

/**
 * flaky --client's wall-clock lane records what a client sends as a
 * simulated run does: a fetch whose signal has already aborted sends
 * nothing (Node's rejects before anything leaves), so it is no request. It
 * was recorded as one (outcome `aborted`), and a call whose one per-call
 * timeout was spent passed `progress` on the wall clock with nothing sent.
 */
describe('the wall-clock lane\'s recording fetch', () => {
  const op = { method: 'POST', headers: { 'idempotency-key': 'k1' }, body: '{"id":1}' };

  it('a signal already aborted: rejects with its reason, sends and records nothing', async () => {
    const sent: SentRequest[] = [];
    const calls: string[] = [];
    const inner = (async (url: string) => { calls.push(url); return new Response('{}', { status: 201 }); }) as unknown as typeof fetch;
    const reason = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    const c = new AbortController();
    c.abort(reason);
    await expect(recordingFetch(inner, 'http://127.0.0.1:1', sent, 0)('http://service.sim/orders', { ...op, signal: c.signal })).rejects.toBe(reason);
    expect(calls).toEqual([]);
    expect(sent).toEqual([]);
  });

  it('a live signal: sent and recorded with its key and answer', async () => {
    const sent: SentRequest[] = [];
    const inner = (async () => new Response('{"ok":true}', { status: 201 })) as unknown as typeof fetch;
    const res = await recordingFetch(inner, 'http://127.0.0.1:1', sent, 0)('http://service.sim/orders', { ...op, signal: new AbortController().signal });
    expect(res.status).toBe(201);
    expect(sent.map((q) => [q.method, q.path, q.key, q.outcome, q.answer])).toEqual([['POST', '/orders', 'k1', 201, '{"ok":true}']]);
  });

  it('a request the client gives up on in flight: recorded aborted, with when it gave up (backoff measures the wait from there)', async () => {
    const sent: SentRequest[] = [];
    const inner = ((_: string, init: RequestInit) => new Promise((_r, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)))) as unknown as typeof fetch;
    const c = new AbortController();
    const t0 = Date.now() - 1000; // real-time: allowed (the wall-clock lane's own clock)
    const pending = recordingFetch(inner, 'http://127.0.0.1:1', sent, t0)('http://service.sim/orders', { ...op, signal: c.signal });
    while (sent.length === 0) await new Promise((r) => setImmediate(r)); // real-time: allowed (until the request is on its way)
    c.abort(new DOMException('timed out', 'TimeoutError'));
    await expect(pending).rejects.toThrow('timed out');
    expect(sent.map((q) => [q.outcome, q.answeredAtMs])).toEqual([['aborted', undefined]]);
    expect(sent[0]!.abortedAtMs).toBeGreaterThanOrEqual(sent[0]!.atMs);
    expect(sent[0]!.abortedAtMs).toBeGreaterThanOrEqual(1000);
  });
});
