import { describe, expect, it } from 'vitest';
import { NO_FAULTS, resolveFaults } from './faults.js';
import { TrackerInstance } from './instance.js';
import { openStore } from './store.js';
import type { Variant } from './strategy.js';
import { json, post, TestClock, TestEnv } from './test-env.js';

function setup(variant: Variant, faults: Parameters<typeof resolveFaults>[0], extra = {}) {
  const store = openStore();
  return { store, inst: new TrackerInstance({ variant, db: store, faults, ...extra }) };
}

describe('fault options', () => {
  it('defaults mean no faults, and the caller’s object is never mutated', () => {
    expect(resolveFaults()).toEqual({ ...NO_FAULTS });
    const pause = { atStep: 'finish', ms: 10, count: 1 };
    const f = resolveFaults({ pause });
    f.pause!.count = 0;
    expect(pause.count).toBe(1);
  });

  it('rejects nonsense knobs', () => {
    expect(() => resolveFaults({ crashMidRequest: -1 })).toThrow(/crashMidRequest/);
    expect(() => resolveFaults({ slowMs: Number.NaN })).toThrow(/slowMs/);
  });
});

describe('crash_mid_request fires at the variant’s point → 500', () => {
  it('naive: after the report commit, so the retry files a duplicate', async () => {
    const { store, inst } = setup('naive', { crashMidRequest: 1 });
    const res = await post(inst, new TestEnv(), { key: 'k' });
    expect(res.status).toBe(500);
    expect(String(json(res).error)).toContain('crash_mid_request');
    expect(store.countReports()).toBe(1);
    expect(inst.faults.crashMidRequest).toBe(0);
    expect((await post(inst, new TestEnv(), { key: 'k' })).status).toBe(201);
    expect(store.countReports()).toBe(2);
  });

  it('key_split: after the report commit, before registration, so the retry files a duplicate', async () => {
    const { store, inst } = setup('key_split', { crashMidRequest: 1 });
    const env = new TestEnv();
    expect((await post(inst, env, { key: 'k' })).status).toBe(500);
    expect(env.steps).not.toContain('register');
    expect(store.countReports()).toBe(1);
    expect(store.keyRows()).toHaveLength(0);
    expect((await post(inst, new TestEnv(), { key: 'k' })).status).toBe(201);
    expect(store.countReports()).toBe(2);
  });

  it('key_atomic: after the claim, before the report; the placeholder is deleted so a retry proceeds at once', async () => {
    const { store, inst } = setup('key_atomic', { crashMidRequest: 1 });
    const env = new TestEnv();
    expect((await post(inst, env, { key: 'k' })).status).toBe(500);
    expect(env.steps).toEqual(['claim', 'process']);
    expect(store.countReports()).toBe(0);
    expect(store.keyRows()).toHaveLength(0);
    const retry = await post(inst, new TestEnv(), { key: 'k' });
    expect(retry.status).toBe(201);
    expect(store.countReports()).toBe(1);
  });

  it('memory_singleflight: after processing, before the report; a waiting twin gets 500 and nothing is cached', async () => {
    const { store, inst } = setup('memory_singleflight', { crashMidRequest: 1 });
    const clock = new TestClock();
    const envA = new TestEnv(clock, ['process']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('process'); // A holds the in-flight entry
    const pB = post(inst, new TestEnv(clock), { key: 'k' }); // B awaits A's Deferred
    envA.release('process');
    const [a, b] = await Promise.all([pA, pB]);
    expect(a.status).toBe(500);
    expect(b.status).toBe(500);
    expect(String(json(b).error)).toContain('in-flight');
    expect(store.countReports()).toBe(0);
    const retry = await post(inst, new TestEnv(clock), { key: 'k' });
    expect(retry.status).toBe(201);
    expect(retry.replay).toBeUndefined();
    expect(store.countReports()).toBe(1);
  });
});

describe('lose_response_after_commit', () => {
  it('commits, then asks the transport to drop the connection; fires once', async () => {
    const { store, inst } = setup('naive', { loseResponseAfterCommit: 1 });
    const lost = await post(inst, new TestEnv());
    expect(lost.dropConnection).toBe(true);
    expect(store.countReports()).toBe(1);
    const next = await post(inst, new TestEnv());
    expect(next.dropConnection).toBeUndefined();
    expect(inst.faults.loseResponseAfterCommit).toBe(0);
  });

  it('with key_atomic the retry after a lost response is a replay, and replays are never dropped', async () => {
    const { store, inst } = setup('key_atomic', { loseResponseAfterCommit: 2 });
    expect((await post(inst, new TestEnv(), { key: 'k' })).dropConnection).toBe(true);
    const retry = await post(inst, new TestEnv(), { key: 'k' });
    expect(retry.replay).toBe(true);
    expect(retry.dropConnection).toBeUndefined();
    expect(inst.faults.loseResponseAfterCommit).toBe(1);
    expect(store.countReports()).toBe(1);
  });

  it('can be re-armed mid-run through instance.faults', async () => {
    const { inst } = setup('naive', {});
    inst.faults.loseResponseAfterCommit = 1;
    expect((await post(inst, new TestEnv())).dropConnection).toBe(true);
  });
});

describe('slow_ms and pause', () => {
  it('slowMs sleeps after the claim, before the report write', async () => {
    const { store, inst } = setup('key_atomic', { slowMs: 300 });
    const env = new TestEnv();
    await post(inst, env, { key: 'k' });
    expect(env.clock.ms).toBe(300);
    expect(store.getKeyRow(JSON.stringify(['default', 'POST', 'k']))?.locked_at).toBe(0);
    expect(store.getReport(1)?.created_at).toBe(300);
  });

  it('pause stalls one request at its step for the given time, once', async () => {
    const { store, inst } = setup(
      'key_atomic',
      { pause: { atStep: 'finish', ms: 800, count: 1 } },
      { leaseMs: 500, allowUnsafeLease: true },
    );
    const clock = new TestClock();
    const envA = new TestEnv(clock, ['finish']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    envA.release('finish'); // now A sleeps 800 ms (the TestEnv advances the clock at once)
    const a = await pA;
    expect(clock.ms).toBe(800);
    expect(a.status).toBe(201);
    expect(inst.faults.pause?.count).toBe(0);
    expect(store.countReports()).toBe(1);
  });

  it('a pause at a step the variant does not have is rejected at construction', () => {
    expect(() => setup('naive', { pause: { atStep: 'finish', ms: 1, count: 1 } })).toThrow(/not a step of naive/);
  });
});
