import { describe, expect, test } from 'vitest';
import { runServiceCampaign } from '../src/service/campaign.js';
import { runScenario } from '../src/scenario/run.js';
import { scenarioSchema } from '../src/scenario/schema.js';
import { registerService } from '../src/service/registry.js';
import correct, { canary } from '../examples/correct-with-progress/service.js';

const module = 'examples/correct-with-progress/service.ts';

/**
 * `progress` (SPEC §5 invariant 5) on a correct service without a lease:
 * it must hold. Before, every deployment whose processing + round trip
 * outlasted the client's timeout was a false alarm — no resubmission could
 * ever hear its answer — and the message said "no order exists" although
 * the resubmissions had made it.
 */
describe('progress without a lease', () => {
  test('the found false alarm: processing 99 ms + a 2 ms round trip against a 100 ms timeout, the first request killed — now the resubmission waits for its answer', async () => {
    registerService(module, correct);
    // The schema alone: the loader's step cross-check knows only built-in variants' steps (issue 19, another change).
    const s = scenarioSchema.parse({
      format: 'retrysim.scenario/2', name: 'slow deployment, unleased service', seed: 0,
      service: { module }, client: { keySource: 'tool_call', maxAttempts: 1, timeoutMs: 100 },
      faults: { slowMs: 99, slowAtStep: 'validate', kill: { instance: 0, atStep: 'validate', restartAfterMs: 0 } },
      operations: [{ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Bug 1: pay fails' }],
      expect: {},
    });
    const r = await runScenario(s, { service: correct });
    expect(r.violations).toEqual([]);
    expect(r.recovery.get('op1')).toMatchObject({ kind: 'success', attempts: 1, timeoutMs: 104 }); // 99 ms processing + a round-trip bound of 4 × 1 + 1 ms
    expect(r.reports.op1).toBe(0); // invariant 1 is judged before the recovery phase; it then made exactly one
  });

  test('a correct service (one transaction: order, key and stored answer) opting in to progress holds', async () => {
    const r = await runServiceCampaign({ def: correct, module, runs: 1000, seed: 1 });
    expect(r.verdict).toBe('holds');
  }, 60_000);

  test('its canary (the key recorded in a second transaction) fails on exactly-one', async () => {
    const r = await runServiceCampaign({ def: canary, module: `${module}#canary`, runs: 1000, seed: 1 });
    expect(r.verdict).toBe('fails');
    expect(r.counterexample!.violations[0]!.invariant).toBe('exactly-one');
  }, 60_000);
});
