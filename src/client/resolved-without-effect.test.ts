import { describe, expect, it } from 'vitest';
import { receivedRefusals, reportsFailure, resolvedWithoutEffect, type ClientRun, type RetryClient } from './run.js';
import type { SentRequest } from './sim-fetch.js';
import { runClientCampaign } from './campaign.js';

/**
 * exactly-one from the call's side: a call that resolves tells its caller
 * the operation was done. A client that reads 409 "in progress" as "already
 * done" resolves while the first attempt may still die: then nothing was
 * done. Until 2026-12 such a client held 1,000 runs (only a 2xx with an id
 * counted as a success).
 */
const on409 = (what: 'done' | 'response' | 'status' | 'throw' | 'retry'): RetryClient => ({
  name: `409-${what}`,
  deadlineMs: 30_000,
  async run(fetch, op) {
    const key = crypto.randomUUID();
    for (let attempt = 1; attempt <= 5; attempt++) {
      let after = 0;
      try {
        const res = await fetch(op.url, { method: op.method, headers: { ...op.headers, 'idempotency-key': key }, body: op.body, signal: AbortSignal.timeout(1500) });
        if (res.ok) return await res.json();
        if (res.status === 409) {
          if (what === 'done') return { alreadyDone: true }; // the bug
          if (what === 'response') return res; // the caller reads res.ok: false
          if (what === 'status') return res.status; // the caller reads 409
          if (what === 'throw') throw new Error('in progress: outcome unknown');
        } else if (res.status < 500 && res.status !== 429) throw new Error(`HTTP ${res.status}`);
        after = Number(res.headers.get('retry-after') ?? 0) * 1000;
      } catch (e) {
        if (!(e instanceof TypeError || (e instanceof DOMException && e.name === 'TimeoutError'))) throw e;
      }
      await new Promise((r) => setTimeout(r, Math.max(after, 100 * 2 ** attempt * Math.random())));
    }
    throw new Error('gave up: the order may exist');
  },
});

describe('a call that resolves without a 2xx, its operation left with no effect, breaks exactly-one', () => {
  it('a client that takes 409 for "done" fails exactly-one, shrunk to 1 op, 1 worker, 1 fault: its last request a 409', async () => {
    const r = await runClientCampaign({ client: on409('done'), runs: 300, seed: 1 });
    expect(r.verdict).toBe('fails');
    const c = r.counterexample!;
    expect(c.violations.map((v) => v.invariant)).toEqual(['exactly-one']);
    expect(c.violations[0]!.detail).toMatch(/^op1\.w0 resolved at t=\d+ ms, telling its caller the report was made, with no 2xx answer \(its last request: 409\), but no report exists — a call that cannot say its operation took effect should throw \(or resolve with ok: false\)$/);
    expect([c.size.operations, c.size.workers, c.size.faults]).toEqual([1, 1, 1]);
  }, 120_000);

  it('the same client handing back the 409 Response or status, throwing on it or retrying it holds', async () => {
    for (const what of ['response', 'status', 'throw', 'retry'] as const) {
      const r = await runClientCampaign({ client: on409(what), runs: 300, seed: 1 });
      expect(r.verdict, `${what}: ${JSON.stringify(r.counterexample?.violations)}`).toBe('holds');
    }
  }, 240_000);

  it('what a resolved value says: false, ok: false, success: false, a status outside 2xx or an error is a failure; nothing else is', () => {
    for (const v of [false, { ok: false }, new Response(null, { status: 409 }), { success: false }, { status: 503 }, { error: 'gave up' }]) expect(reportsFailure(v), JSON.stringify(v)).toBe(true);
    for (const v of [undefined, null, '', { id: 1 }, { ok: true }, new Response('{}', { status: 201 }), { status: 201 }, { error: null }, { error: false }, [] as unknown]) expect(reportsFailure(v), JSON.stringify(v)).toBe(false);
    const throwing = Object.defineProperty({}, 'ok', { get() { throw new Error('no'); } });
    expect(reportsFailure(throwing)).toBe(false);
  });

  it('at its boundaries: only a resolved call that reported no failure, sent the operation, got no 2xx for it and left no effect', () => {
    const q = (outcome: SentRequest['outcome'], more: Partial<SentRequest> = {}): SentRequest => ({ atMs: 0, method: 'POST', path: '/orders', key: 'k', body: '{}', ...(outcome === undefined ? {} : { outcome }), ...more });
    const w = (sent: SentRequest[], more: Partial<ClientRun['workers'][number]> = {}): ClientRun['workers'][number] => ({ name: 'op1.w0', operation: 'op1', startMs: 0, endMs: 7, sent, outcome: 'resolved', ...more });
    const isAttempt = (r: SentRequest) => r.method === 'POST' && r.path === '/orders';
    const told = (x: ClientRun['workers'][number], effects = 0) => resolvedWithoutEffect(x, effects, 'order', isAttempt)?.detail;
    expect(told(w([q(409)]))).toBe('op1.w0 resolved at t=7 ms, telling its caller the order was made, with no 2xx answer (its last request: 409), but no order exists — a call that cannot say its operation took effect should throw (or resolve with ok: false)');
    expect(told(w([q(503), q('connection_closed')]))).toMatch(/\(its last request: connection closed\)/);
    expect(told(w([q(undefined)]))).toMatch(/\(its last request: no answer yet\)/);
    for (const status of [199, 300]) expect(told(w([q(status)])), String(status)).toMatch(/^op1\.w0 resolved/);
    for (const status of [200, 201, 299]) expect(told(w([q(409), q(status)])), String(status)).toBeUndefined();
    // Not its operation's request: a status GET answered 200 is no answer to it, and alone it sent nothing.
    expect(told(w([q(409), q(200, { method: 'GET', path: '/orders/1' })]))).toMatch(/its last request: 409/);
    expect(told(w([q(200, { method: 'GET', path: '/orders/1' })]))).toBeUndefined();
    expect(told(w([q(409)]), 1)).toBeUndefined();
    expect(told(w([q(409)], { reportedFailure: true }))).toBeUndefined();
    expect(told(w([q(409)], { outcome: 'rejected' }))).toBeUndefined();
    expect(told(w([q(409)], { outcome: 'stopped' }))).toBeUndefined();
  });

  it('the statuses a call was answered outside 2xx: numbers only, 200 and 299 excluded, 199 and 300 in', () => {
    const sent = ([201, 409, 'connection_closed', 200, 299, 199, 300, undefined, 409] as const).map((outcome, i): SentRequest => ({ atMs: i, method: 'POST', path: '/orders', key: 'k', body: '{}', ...(outcome === undefined ? {} : { outcome }) }));
    expect([...receivedRefusals(sent)].sort((a, b) => a - b)).toEqual([199, 300, 409]);
  });

  it('a bare status is a failure when the call was answered it outside 2xx, or is 0 (no answer); a list is one when it holds one', () => {
    const got = new Set([409, 503]);
    for (const v of [409, 503, 0, [201, 409], [0, 0], [{ ok: false }]]) expect(reportsFailure(v, got), JSON.stringify(v)).toBe(true);
    for (const v of [201, 404, 7, [201, 201], [], [404]]) expect(reportsFailure(v, got), JSON.stringify(v)).toBe(false);
    expect(reportsFailure(409)).toBe(false); // answered nothing outside 2xx: an id, a count
  });

  it('a status is a failure outside 200–299 only when it is a number', () => {
    for (const status of [199, 300, 409]) expect(reportsFailure({ status }), String(status)).toBe(true);
    for (const status of [200, 299, '500']) expect(reportsFailure({ status }), String(status)).toBe(false);
  });
});
