import { describe, expect, it } from 'vitest';
import { loadService } from './load.js';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';

const MODULE = 'src/service/fixtures/module-lock.ts';

function scenario(faults: Record<string, unknown>) {
  return parseScenario(JSON.stringify({
    format: 'retrysim.scenario/2', name: 'module lock', seed: 1, service: { module: MODULE, instances: 2, epochMs: 1767225600000 },
    client: { keySource: 'tool_call', maxAttempts: 2, timeoutMs: 200 }, faults,
    operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
  }));
}

describe('a lock made at module level (pLimit(1) outside memory()), which every simulated instance shares and which outlives a kill', () => {
  it('a request waiting on one a kill ended: the never-answered line names the killed request and the module-level lock — it named real I/O only', async () => {
    // The first request holds the lock when its instance is killed; the retry lands on the other instance.
    const def = await loadService(MODULE);
    await expect(runScenario(scenario({ kill: { instance: 0, atStep: 'check', restartAfterMs: 1000 } }), { service: def }))
      .rejects.toThrow(/never answered request s1\/op1\.w0#2: .* — or a promise only s0\/op1\.w0#1, a request killed with its process, would have settled: a lock, queue or limiter made at module level .* make it in memory\(\)$/);
  });

  it('a request waiting on one of another instance still at work: the line names that request', async () => {
    // The first request is slow at its step, past the client's timeout; the retry lands on the other instance and waits behind it.
    const def = await loadService(MODULE);
    await expect(runScenario(scenario({ slowMs: 5000, slowAtStep: 'check' }), { service: def }))
      .rejects.toThrow(/never answered request s1\/op1\.w0#2: .* — or a promise only s0\/op1\.w0#1, a request of another instance, settles: /);
  });
});
