import { afterEach, describe, expect, it } from 'vitest';
import { runServiceCampaign, type ServiceCampaignResult } from '../service/campaign.js';
import type { FaultKind } from '../scenario/arbitraries.js';
import { plantExecNotAtomic } from '../kv/client.js';
import { appService } from './define.js';
import type { AppDescriptor } from './descriptor.js';
import { multiOrderApp, watchOrderApp } from './fixtures/multi-order-app.js';

afterEach(() => plantExecNotAtomic(false));

const campaign = (desc: AppDescriptor, faults: FaultKind[], runs: number, seed = 1): Promise<ServiceCampaignResult> =>
  runServiceCampaign({ def: appService(desc), module: desc.name, runs, seed, faults });

const invariants = (r: ServiceCampaignResult) => r.counterexample?.violations.map((v) => v.invariant) ?? [];

/** Lost answers (the crash fault at a store command, and lost HTTP answers) and duplicates in flight at once. */
const FAULTS: FaultKind[] = ['crash', 'loseResponse', 'concurrency'];

describe('MULTI … EXEC in a hosted app (node-redis: redis.multi().set(…).set(…).exec())', () => {
  it('the order and the key written in one MULTI hold under lost answers; written as two commands, a crash between them fails exactly-one', async () => {
    const ok = await campaign(multiOrderApp('multi'), FAULTS, 400);
    expect(ok.verdict, JSON.stringify(ok.counterexample?.violations)).toBe('holds');
    // The transaction was a step of its own, and the crash fault struck its answer.
    const reached = Object.fromEntries(ok.coverage!.rows.map((r) => [r.id, r.runs]));
    expect(reached['crash@kv.exec: answer lost']).toBeGreaterThan(0);
    const bad = await campaign(multiOrderApp('separate'), FAULTS, 400);
    expect(bad.verdict).toBe('fails');
    expect(invariants(bad)).toContain('exactly-one');
  }, 60_000);

  it('the canary store whose EXEC runs each queued command as its own step makes the MULTI app fail exactly-one', async () => {
    plantExecNotAtomic(true);
    const bad = await campaign(multiOrderApp('multi'), FAULTS, 400);
    expect(bad.verdict).toBe('fails');
    expect(invariants(bad)).toContain('exactly-one');
  }, 60_000);
});

describe('WATCH … MULTI … EXEC (optimistic locking)', () => {
  const faults: FaultKind[] = [...FAULTS, 'instances'];

  it('WATCH on a connection of its own holds; the same app without WATCH fails exactly-one', async () => {
    const ok = await campaign(watchOrderApp('watch'), faults, 300);
    expect(ok.verdict, JSON.stringify(ok.counterexample?.violations)).toBe('holds');
    const reached = Object.fromEntries(ok.coverage!.rows.map((r) => [r.id, r.runs]));
    expect(reached['preempt@kv.watch']).toBeGreaterThan(0);
    const bad = await campaign(watchOrderApp('no-watch'), faults, 80);
    expect(bad.verdict).toBe('fails');
    expect(invariants(bad)).toContain('exactly-one');
  }, 60_000);
});
