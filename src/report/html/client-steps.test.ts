/**
 * withClientSteps places a call's derived rows (its start, each wait before
 * it sends again, its end) among the run's steps. Each request is matched to
 * its own request step — the first unused one of its worker at its time — so
 * a call sending two requests in the same millisecond (a hedge fired at once)
 * gets its "sends again" row before its second request, not its first.
 */
import { describe, expect, it } from 'vitest';
import { withClientSteps, type ClientWorker } from './client-steps.js';
import type { RequestInfo } from './stepper-data.js';
import type { Lane, Step } from './stepper-types.js';

const lanes: Lane[] = [{ id: 'op1.w0', label: 'op1.w0', kind: 'worker' }, { id: 'net', label: 'network', kind: 'network' }, { id: 's0', label: 'server s0', kind: 'server' }];
const request = (n: number, t: number): Step => ({ t, kind: 'request', actor: `s0/op1.w0#${n}`, event: 'spawn', text: `#${n} POST /orders`, from: 0, to: 2, db: 0, line: '' });
const info = (n: number): RequestInfo => ({ worker: 'op1.w0', server: 0, n, key: 'k', tenant: 'default', entry: n, method: 'POST', path: '/orders' });
const sent = (atMs: number) => ({ atMs, method: 'POST', path: '/orders', key: 'k', body: '{}', outcome: 201, answeredAtMs: atMs + 2 });

describe('a call\'s rows among the run\'s steps', () => {
  it('two requests sent in the same millisecond: the second one\'s "sends again" row goes right before the second request', () => {
    const steps = [request(1, 5), request(2, 5), { ...request(3, 9), kind: 'answer' as const, actor: 's0/op1.w0#1', event: 'answer 201', text: '#1 answers 201' }];
    const requests = new Map([['s0/op1.w0#1', info(1)], ['s0/op1.w0#2', info(2)]]);
    const worker: ClientWorker = { name: 'op1.w0', operation: 'op1', startMs: 0, endMs: 10, sent: [sent(5), sent(5)], outcome: 'resolved' };
    const out = withClientSteps(steps, [worker], lanes, requests, 'hedge').map((s) => s.kind === 'worker' ? s.event : s.actor);
    expect(out).toEqual(['start', 's0/op1.w0#1', 'wait', 's0/op1.w0#2', 's0/op1.w0#1', 'resolved']);
  });

  it('a request that has no step of its own (aborted before it was sent) gets its row at its time', () => {
    const steps = [request(1, 5), request(2, 20)];
    const requests = new Map([['s0/op1.w0#1', info(1)], ['s0/op1.w0#2', info(2)]]);
    const worker: ClientWorker = { name: 'op1.w0', operation: 'op1', startMs: 0, endMs: 30, sent: [sent(5), sent(12), sent(20)], outcome: 'resolved' };
    const out = withClientSteps(steps, [worker], lanes, requests, 'c').map((s) => s.kind === 'worker' ? `${s.event}@${s.t}` : s.actor);
    expect(out).toEqual(['start@0', 's0/op1.w0#1', 'wait@12', 'wait@20', 's0/op1.w0#2', 'resolved@30']);
  });
});

describe('the story of a run without a second effect', () => {
  it('tells its requests in the order they first ran on a server, not the order they last did something', async () => {
    const { summarize } = await import('./stepper-story.js');
    const step = (actor: string, kind: Step['kind'], event: string, text: string): Step => ({ t: 1, kind, actor, event, text, from: 2, db: 0, line: '' });
    const steps = [
      step('s0/op1.w0#1', 'request', 'spawn', '#1 POST /orders'),
      step('s0/op1.w1#2', 'request', 'spawn', '#2 POST /orders'),
      step('s0/op1.w0#1', 'phase', 'claim', '#1 claim'),
      step('s0/op1.w1#2', 'phase', 'claim', '#2 claim'),
      step('s0/op1.w1#2', 'answer', 'answer 409', '#2 answers 409'),
      step('s0/op1.w0#1', 'answer', 'answer 201', '#1 answers 201'),
    ];
    const [story] = summarize({ steps, violations: [], noun: 'order', reports: {} });
    expect(story).toMatch(/^#1 ran claim.*; #2 ran claim/);
  });
});
