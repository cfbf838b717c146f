import { describe, expect, it } from 'vitest';
import { parseScenario, ScenarioError } from './load.js';

const ok = {
  format: 'retrysim.scenario/2',
  name: 't',
  seed: 1,
  service: { variant: 'key_atomic' },
  client: { keySource: 'tool_call' },
  operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }],
  expect: {},
};

function issuesOf(input: unknown): Array<{ path: string; message: string }> {
  try {
    parseScenario(typeof input === 'string' ? input : JSON.stringify(input));
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return [...(e as ScenarioError).issues];
  }
  throw new Error('expected the scenario to be rejected');
}

describe('scenario loader', () => {
  it('accepts a minimal scenario and fills documented defaults', () => {
    const s = parseScenario(JSON.stringify(ok));
    expect(s.service.leaseMs).toBe(5000);
    expect(s.client.timeoutMs).toBe(2000);
    expect(s.client.maxAttempts).toBe(4);
    expect(s.faults).toEqual({ loseResponseAfterCommit: 0, crashMidRequest: 0, slowMs: 0 });
  });

  it('names the path of a wrongly typed field', () => {
    const issues = issuesOf({ ...ok, faults: { slowMs: 'slow' } });
    expect(issues[0]!.path).toBe('faults.slowMs');
  });

  it('names the path of a bad enum value inside an array', () => {
    const issues = issuesOf({ ...ok, operations: [{ ...ok.operations[0], workers: 0 }] });
    expect(issues[0]!.path).toBe('operations[0].workers');
  });

  it('refuses unknown fields (a typo must not silently mean "no fault")', () => {
    const issues = issuesOf({ ...ok, faults: { loseResponse: 1 } });
    expect(issues[0]!.path).toBe('faults');
    expect(issues[0]!.message).toMatch(/loseResponse/);
  });

  it('refuses malformed JSON with a clear message', () => {
    expect(issuesOf('{"format": ')[0]!.message).toMatch(/not JSON/);
  });

  it('refuses an unknown version by name', () => {
    const issues = issuesOf({ ...ok, format: 'retrysim.scenario/9' });
    expect(issues).toEqual([{ path: 'format', message: expect.stringMatching(/unsupported version 'retrysim.scenario\/9'/) }]);
  });

  it('refuses a lease not longer than client timeout + processing, naming the numbers', () => {
    const issues = issuesOf({ ...ok, service: { variant: 'key_atomic', leaseMs: 1000 } });
    expect(issues[0]!.path).toBe('service.leaseMs');
    expect(issues[0]!.message).toMatch(/1000/);
    expect(issues[0]!.message).toMatch(/2000/);
    // The same lease is accepted when asked for on purpose (scenario 6).
    expect(() => parseScenario(JSON.stringify({ ...ok, service: { variant: 'key_atomic', leaseMs: 1000, allowUnsafeLease: true } }))).not.toThrow();
  });

  it('checks cross-field references', () => {
    expect(issuesOf({ ...ok, expect: { reports: { nope: 1 } } })[0]!.path).toBe('expect.reports.nope');
    expect(issuesOf({ ...ok, faults: { kill: { instance: 3, atMs: 5 } } })[0]!.path).toBe('faults.kill.instance');
    expect(issuesOf({ ...ok, operations: [ok.operations[0], { ...ok.operations[0], id: 'op2' }] })[0]!.message).toMatch(/duplicate runId/);
  });

  it('refuses a schedule decision that does not index its candidates', () => {
    expect(issuesOf({ ...ok, schedule: [{ t: 0, chosen: 2, preempted: true, of: ['a', 'b'] }] })[0]!.path).toBe('schedule[0]');
  });
});
