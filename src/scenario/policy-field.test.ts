import { describe, expect, it } from 'vitest';
import { parseScenario } from './load.js';
import { runScenario } from './run.js';
import { loadService } from '../service/load.js';

/**
 * `client.policy` in a user service's scenario file is not a label: `check
 * --service` drives the service with the built-in retrying client, and the
 * policy is that client's backoff (SPEC §1: "bug-report-harness" is Full
 * Jitter, base 20 ms, cap 200 ms; the generator writes "codex-sampling" for
 * its uncapped long waits). So the name stays what it is: another would be
 * another run.
 */
describe('client.policy of a user service\'s file', () => {
  it('chooses when the built-in client retries: the same timed-out request is retried at another time under another policy, and the failure goes', async () => {
    const module = 'examples/payments-check-then-insert/service.ts';
    const service = await loadService(module);
    // A slow charge outlasts the client's 100 ms timeout; the retry's start is the policy's delay later.
    const file = (policy: string) => parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'retry after a timeout', seed: 0,
      service: { module }, client: { keySource: 'tool_call', policy, maxAttempts: 2, timeoutMs: 100 },
      network: { latencyMeanMs: 1, latencySdMs: 0 }, faults: { slowMs: 140, slowAtStep: 'charge' },
      operations: [{ id: 'op1', runId: 'run-1', module: 'effect', title: 'effect 1' }], expect: {},
    }));
    const run = async (policy: string) => {
      const r = await runScenario(file(policy), { service });
      return { retryAt: r.operations[0]!.attempts[1]!.startMs, violations: r.violations.map((v) => v.invariant) };
    };
    const harness = await run('bug-report-harness');
    const codex = await run('codex-sampling');
    // Full Jitter below 40 ms after the timeout at 100 ms; the Codex layer's 200 ms ± 10 %.
    expect(harness.retryAt).toBeLessThan(140);
    expect(codex.retryAt).toBeGreaterThanOrEqual(280);
    expect(harness.violations).toEqual(['exactly-one']);
    expect(codex.violations).toEqual([]);
  });
});
