import { describe, expect, it } from 'vitest';
import { firstRefusal, preferRefusal } from './coverage.js';
import type { ClientRun } from './run.js';
import type { SentRequest } from './sim-fetch.js';

const worker = (name: string, sent: SentRequest[]): ClientRun['workers'][number] => ({ name, operation: name.split('.')[0]!, startMs: 0, endMs: 0, sent, outcome: 'rejected' });
const q = (atMs: number, outcome: SentRequest['outcome'], answer?: string, injected?: true): SentRequest => ({ atMs, method: 'POST', path: '/v2/items', key: 'k', body: '{}', outcome, ...(answer !== undefined ? { answer } : {}), ...(injected ? { injected } : {}) });

describe('the answer a campaign that never succeeded quotes', () => {
  it("is the service's own first answer outside 2xx, before a fault's canned one and a transport failure, in time order across workers", () => {
    const r = firstRefusal([
      worker('op1.w0', [q(0, 404, '{"error":"not found"}', true), q(50, 'connection_closed'), q(90, 404, '{"error":"no route"}')]),
      worker('op2.w0', [q(10, 'timeout'), q(70, 500, '')]),
    ]);
    expect(r).toEqual({ line: 'op2.w0 POST /v2/items → 500 (empty body)', own: true });
  });

  it('falls back to the first refusal of any kind, and is undefined when every request was answered 2xx', () => {
    expect(firstRefusal([worker('op1.w0', [q(5, 429, '{"error":"too many"}', true), q(1, 'connection_refused')])])).toEqual({ line: 'op1.w0 POST /v2/items → connection_refused', own: false });
    expect(firstRefusal([worker('op1.w0', [q(0, 201, '{"id":1}'), q(3, undefined)])])).toBeUndefined();
  });

  it("across runs: a later run's own answer replaces an earlier fault's, never the other way", () => {
    const fault = { line: 'op1.w0 POST /x → 404 {"error":"not found"}', own: false };
    const own = { line: 'op2.w0 POST /x → 404 {"error":"no route"}', own: true };
    expect(preferRefusal(undefined, fault)).toBe(fault);
    expect(preferRefusal(fault, own)).toBe(own);
    expect(preferRefusal(own, { ...own, line: 'later' })).toBe(own);
    expect(preferRefusal(own, fault)).toBe(own);
    expect(preferRefusal(fault, undefined)).toBe(fault);
  });
});
