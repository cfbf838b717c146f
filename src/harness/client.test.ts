import { describe, expect, it } from 'vitest';
import { anthropicSdkPolicy, bugReportHarnessPolicy, type RetryPolicy } from '../backoff/policies.js';
import { Prng } from '../random/prng.js';
import { retryAfterOf, submitReport, type AttemptRecord } from './client.js';
import type { Transport, WireOutcome } from './transport.js';

/** A 429 with the given Retry-After, then a 201: the delays the client slept between the two. */
async function sleepsAfter429(policy: RetryPolicy, retryAfter: string | undefined): Promise<number[]> {
  const answers: WireOutcome[] = [
    { kind: 'response', status: 429, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter }, body: '{"error":"slow down"}' },
    { kind: 'response', status: 201, headers: {}, body: '{"report_id":7}' },
  ];
  const transport: Transport = { send: async () => answers.shift()! };
  let now = 0;
  const slept: number[] = [];
  const log: AttemptRecord[] = [];
  const r = await submitReport(
    { runId: 'run-1', module: 'm', title: 't', steps: '' },
    'toolu_1',
    transport,
    { now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)), rng: new Prng(3) },
    { keySource: 'tool_call', policy, maxAttempts: 3 },
    log,
  );
  expect(r.kind).toBe('success');
  return slept;
}

describe('the built-in client and Retry-After', () => {
  it('a policy that lets the server win (the Anthropic SDK, SPEC §1) waits exactly Retry-After', async () => {
    expect(await sleepsAfter429(anthropicSdkPolicy, '2')).toEqual([2000]);
    expect(await sleepsAfter429(anthropicSdkPolicy, '1.5')).toEqual([1500]);
  });

  it('without the header, or with one it cannot read, the policy formula decides', async () => {
    for (const h of [undefined, 'Wed, 21 Oct 2015 07:28:00 GMT', '-1', '']) {
      const [d] = await sleepsAfter429(anthropicSdkPolicy, h);
      expect(d).not.toBe(2000);
      // 0.5 s · 2^n · (1 − 0.25·U): within [0.375, 1] s for the first retries.
      expect(d).toBeGreaterThan(0);
      expect(d).toBeLessThanOrEqual(1000);
    }
  });

  it('the bug-report harness policy is Full Jitter whatever the server says (SPEC §4)', async () => {
    const [d] = await sleepsAfter429(bugReportHarnessPolicy, '2');
    expect(d).toBeLessThanOrEqual(200);
  });

  it('reads delay-seconds only', () => {
    expect(retryAfterOf('3')).toBe(3000);
    expect(retryAfterOf(' 0 ')).toBe(0);
    expect(retryAfterOf('0.25')).toBe(250);
    expect(retryAfterOf(undefined)).toBeUndefined();
    expect(retryAfterOf('soon')).toBeUndefined();
    expect(retryAfterOf('-2')).toBeUndefined();
  });
});

describe('the built-in client counts retries in each policy\'s own numbering', () => {
  it('the Anthropic SDK (n = retries already made) waits 0.5 s · (1 − 0.25·U) before its first retry, 1 s · … before its second', async () => {
    const answers: WireOutcome[] = [
      { kind: 'transport_error', reason: 'timeout' },
      { kind: 'transport_error', reason: 'timeout' },
      { kind: 'response', status: 201, headers: {}, body: '{"report_id":7}' },
    ];
    const slept: number[] = [];
    let now = 0;
    await submitReport({ runId: 'run-1', module: 'm', title: 't', steps: '' }, 'toolu_1', { send: async () => answers.shift()! },
      { now: () => now, sleep: async (ms) => void (slept.push(ms), (now += ms)), rng: new Prng(9) }, { keySource: 'tool_call', policy: anthropicSdkPolicy }, []);
    expect(slept).toHaveLength(2);
    expect(slept[0]).toBeGreaterThan(375);
    expect(slept[0]).toBeLessThanOrEqual(500);
    expect(slept[1]).toBeGreaterThan(750);
    expect(slept[1]).toBeLessThanOrEqual(1000);
  });
});
