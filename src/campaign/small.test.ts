import { describe, expect, it } from 'vitest';
import { claimById, CLAIMS } from './claims.js';
import { smallScenarios } from './small.js';
import { runScenario } from '../scenario/run.js';
import { ListChoice } from '../sim/choice/list.js';
import { Reached } from '../service/reached.js';
import { exploreAll } from '../sim/explore/exhaustive.js';

const names = (id: string) => smallScenarios(claimById(id)).map((s) => `${s.name.slice(s.name.indexOf(': ') + 2)}@${s.operations.map((o) => o.workers).join('+')}`);

const KEY_ATOMIC_ALL = [
  'no fault@2', 'one lost response@2', 'one answer lost on the way back@2', 'one crash@2', 'slow processing@2', 'one request stalls past a short lease@2',
  'kill after the check/claim@2', 'two instances, one lost response@2', 'one key, a second body@1+1', 'processing longer than half the lease@2',
  'processing longer than half the lease, one crash@2', 'a stalled request crashes after a take-over@2', 'two tenants, same raw key@1+1',
  'a request stalls for two minutes, a later worker takes over@2',
];

describe('smallScenarios: the bounded-exhaustive search\'s scenarios, from the claim\'s own fault space', () => {
  it('one per fault the claim has (two workers on the key where it has concurrency)', () => {
    expect(names('key_atomic-tool_call-holds')).toEqual(KEY_ATOMIC_ALL);
    // HARNESS_FAULTS only: no key reuse, lease race or crash after a take-over.
    expect(names('key_atomic_nofence-tool_call-fails')).toEqual(KEY_ATOMIC_ALL.filter((n) => !/second body|half the lease|after a take-over/.test(n)));
    expect(names('naive-none-fails')).toEqual(['no fault@1', 'one lost response@1', 'one answer lost on the way back@1']);
    expect(names('key_split-tool_call-race-fails')).toEqual(['no fault@2']);
    expect(names('key_split-tool_call-crash-fails')).toEqual(['no fault@1', 'one crash@1']);
    expect(names('memory_singleflight-tool_call-fails')).toEqual(['no fault@1', 'one lost response@1', 'kill after the check/claim@1', 'two instances, one lost response@1']);
    expect(names('key_atomic_no_fingerprint-tool_call-fails')).toEqual(['no fault@1', 'one key, a second body@1+1']);
    expect(names('key_atomic_refuse_keyed-tool_call-fails')).toEqual(['no fault@1']);
    expect(names('key_atomic-tool_call-model_new_id-fails')).toEqual(['model resubmits after every answer is lost@1']);
  });

  it('every scenario names its claim\'s variant and key source, and runs at seed 1 with a 5 s lease unless it says otherwise', () => {
    for (const c of CLAIMS) {
      for (const s of smallScenarios(c)) {
        expect(s.name.startsWith(`${c.variant}/${c.keySource}: `), s.name).toBe(true);
        expect(s.seed).toBe(1);
        expect(s.service.variant).toBe(c.variant);
        expect(s.client.keySource).toBe(c.keySource);
        expect(s.operations[0]).toMatchObject({ id: 'op1', runId: 'run-1', module: 'checkout', title: 'Pay fails' });
        if (!/lease|take-over|two minutes/.test(s.name)) expect(s.service.leaseMs, s.name).toBe(5000);
      }
    }
  });

  it('each scenario reaches the situation its name promises (one run, default schedule), and key_atomic holds in all', async () => {
    const promised: Record<string, string[]> = {
      'no fault': ['replay'],
      'one lost response': ['lose-after-commit'],
      'one answer lost on the way back': ['answer-lost'],
      'one crash': ['crash@after-process'],
      'slow processing': ['slow@process', 'overlap:2'],
      'one request stalls past a short lease': ['pause@process', 'service:lease-takeover'],
      'kill after the check/claim': ['kill@process', 'service:lease-takeover'],
      'two instances, one lost response': ['instance:second'],
      'one key, a second body': [],
      'processing longer than half the lease': ['slow@process', 'overlap:2'],
      'processing longer than half the lease, one crash': ['slow@process', 'crash@after-process'],
      'a stalled request crashes after a take-over': ['pause@process', 'service:lease-takeover', 'crash@after-process'],
      'two tenants, same raw key': [],
      'a request stalls for two minutes, a later worker takes over': ['pause@process', 'service:lease-takeover', 'span:1h'],
    };
    const faultIds = /^(lose-after-commit|answer-lost|crash@|slow@|pause@|kill@|instance:)/;
    for (const s of smallScenarios(claimById('key_atomic-tool_call-holds'))) {
      const name = s.name.slice(s.name.indexOf(': ') + 2);
      const reached = new Reached();
      const r = await runScenario(s, { choices: new ListChoice([]), reached });
      expect(r.violations, name).toEqual([]);
      for (const id of promised[name]!) expect([...reached.ids], name).toContain(id);
      // No fault it does not name.
      expect([...reached.ids].filter((x) => faultIds.test(x)).sort(), name).toEqual(promised[name]!.filter((x) => faultIds.test(x)).sort());
      if (name === 'one key, a second body') {
        // The same key with another body after the first finished: refused (422), nothing written.
        expect(s.operations[1]).toMatchObject({ id: 'op2', keyFrom: 'op1', startMs: 50, title: 'Refund fails' });
        expect(r.reports).toEqual({ op1: 1, op2: 0 });
      }
      if (name === 'two tenants, same raw key') {
        expect(s.operations.map((o) => [o.runId, o.tenant])).toEqual([['run-1', undefined], ['run-1', 'globex']]);
        expect(r.reports).toEqual({ op1: 1, op2: 1 });
      }
      if (name === 'one request stalls past a short lease') expect(s.service).toMatchObject({ leaseMs: 30, allowUnsafeLease: true });
    }
    // The tenants scenario is what breaks an unscoped key table.
    const unscoped = smallScenarios(claimById('key_atomic_unscoped-tool_call-fails')).find((s) => s.name.endsWith('two tenants, same raw key'))!;
    const bad = await runScenario(unscoped, { choices: new ListChoice([]) });
    expect(bad.violations.map((v) => v.invariant)).toContain('tenant-isolation');
  });

  it('two instances, one lost response: whichever schedule commits on the armed instance first loses its answer', async () => {
    // The default schedule happens to commit on the second instance (nothing lost); the search reaches the loss.
    const s = smallScenarios(claimById('key_atomic-tool_call-holds')).find((x) => x.name.endsWith('two instances, one lost response'))!;
    expect(s.service.instances).toBe(2);
    let lost = 0;
    const e = await exploreAll(async (choices) => {
      const reached = new Reached();
      await runScenario(s, { choices, reached });
      if (reached.ids.has('lose-after-commit')) lost++;
      return null;
    }, { schedulesMax: 1000, reduce: true, keep: () => false });
    expect(e.complete).toBe(true);
    expect(lost).toBeGreaterThan(0);
  });

  it('model-layer claims: one worker whose first call loses every answer, and the model resubmits (rewording when the claim says so)', async () => {
    const [fresh] = smallScenarios(claimById('key_atomic-tool_call-model_new_id-fails'));
    const [reword] = smallScenarios(claimById('key_atomic-business-model_reword-fails'));
    expect(fresh!.client.model).toMatchObject({ resubmits: 1, reword: false });
    expect(reword!.client.model).toMatchObject({ resubmits: 1, reword: true });
    expect(fresh!.network.loseResponses).toBe(2);
    const r = await runScenario(fresh!, { choices: new ListChoice([]) });
    expect(r.violations.map((v) => v.invariant)).toContain('exactly-one');
  });
});
