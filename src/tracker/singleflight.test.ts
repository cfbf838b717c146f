import { describe, expect, it } from 'vitest';
import { TrackerInstance } from './instance.js';
import { openStore } from './store.js';
import { json, post, TestClock, TestEnv } from './test-env.js';

function setup(extra: { completedTtlMs?: number } = {}) {
  const store = openStore();
  return { store, inst: new TrackerInstance({ variant: 'memory_singleflight', db: store, faults: { slowMs: 100 }, ...extra }) };
}

describe('memory_singleflight', () => {
  it('two concurrent requests with one key file one report; the loser replays the winner', async () => {
    const { store, inst } = setup();
    const clock = new TestClock();
    const envA = new TestEnv(clock, ['insert']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('insert');
    const envB = new TestEnv(clock);
    const pB = post(inst, envB, { key: 'k' });
    envA.release('insert');
    const [a, b] = await Promise.all([pA, pB]);
    expect(a.status).toBe(201);
    expect(a.replay).toBeUndefined();
    expect(b.status).toBe(201);
    expect(b.replay).toBe(true);
    expect(json(b)).toEqual(json(a));
    expect(envB.steps).toEqual(['check']);
    expect(store.countReports()).toBe(1);
  });

  it('a concurrent twin with a different body gets 422', async () => {
    const { store, inst } = setup();
    const envA = new TestEnv(undefined, ['insert']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('insert');
    const b = await post(inst, new TestEnv(envA.clock), { key: 'k', body: JSON.stringify({ run_id: 'r', module: 'm', title: 'other', steps: '' }) });
    expect(b.status).toBe(422);
    envA.release('insert');
    await pA;
    expect(store.countReports()).toBe(1);
  });

  it('restart() loses the dedup state: the retry files a second report (the canary)', async () => {
    const { store, inst } = setup();
    await post(inst, new TestEnv(), { key: 'k' });
    inst.restart();
    const again = await post(inst, new TestEnv(), { key: 'k' });
    expect(again.status).toBe(201);
    expect(again.replay).toBeUndefined();
    expect(store.countReports()).toBe(2);
    expect(inst.restarts).toBe(1);
  });

  it('two instances on one database do not share dedup state (the canary)', async () => {
    const { store, inst } = setup();
    const other = new TrackerInstance({ variant: 'memory_singleflight', db: store, name: 'b' });
    await post(inst, new TestEnv(), { key: 'k' });
    expect((await post(other, new TestEnv(), { key: 'k' })).replay).toBeUndefined();
    expect(store.countReports()).toBe(2);
  });

  it('completed entries expire after the TTL', async () => {
    const { store, inst } = setup({ completedTtlMs: 1000 });
    const clock = new TestClock();
    await post(inst, new TestEnv(clock), { key: 'k' }); // done at t=100
    clock.ms = 1099;
    expect((await post(inst, new TestEnv(clock), { key: 'k' })).replay).toBe(true);
    clock.ms = 1100;
    expect((await post(inst, new TestEnv(clock), { key: 'k' })).replay).toBeUndefined();
    expect(store.countReports()).toBe(2);
  });
});
