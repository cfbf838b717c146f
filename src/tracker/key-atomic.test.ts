import { describe, expect, it } from 'vitest';
import { TrackerInstance } from './instance.js';
import { scopeKey } from './scope.js';
import { openStore } from './store.js';
import { json, post, TestClock, TestEnv } from './test-env.js';

const K = scopeKey('default', 'POST', 'k');

/** Lease 500 ms, as in SPEC scenario 6; unsafe on purpose. */
function setup(variant: 'key_atomic' | 'key_atomic_nofence' = 'key_atomic') {
  const store = openStore();
  const clock = new TestClock();
  const inst = new TrackerInstance({ variant, db: store, leaseMs: 500, allowUnsafeLease: true });
  return { store, clock, inst };
}

describe('key_atomic', () => {
  it('claims with fence 1 and finishes with the report and the key in one commit', async () => {
    const { store, inst } = setup();
    await post(inst, new TestEnv(), { key: 'k' });
    expect(store.getKeyRow(K)).toMatchObject({ status: 'done', fence: 1, response_code: 201, response_body: '{"report_id":1}' });
    expect(store.getReport(1)?.idem_key).toBe(K);
  });

  it('answers 409 while another request holds the key within the lease', async () => {
    const { store, clock, inst } = setup();
    const envA = new TestEnv(clock, ['finish']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    clock.ms += 499;
    const b = await post(inst, new TestEnv(clock), { key: 'k' });
    expect(b.status).toBe(409);
    expect(store.getKeyRow(K)).toMatchObject({ status: 'in_progress', fence: 1, locked_at: 0 });
    envA.release('finish');
    expect((await pA).status).toBe(201);
    expect(store.countReports()).toBe(1);
  });

  it('takes over after the lease with fence 2; the stale finisher rolls back and gets the winner’s result', async () => {
    const { store, clock, inst } = setup();
    const envA = new TestEnv(clock, ['finish']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    clock.ms += 600; // A stalls past its lease
    const envB = new TestEnv(clock, ['finish']);
    const pB = post(inst, envB, { key: 'k' });
    await envB.reached('finish');
    expect(store.getKeyRow(K)).toMatchObject({ status: 'in_progress', fence: 2, locked_at: 600 });
    envB.release('finish');
    const b = await pB;
    expect(b.status).toBe(201);
    envA.release('finish');
    const a = await pA;
    expect(a.status).toBe(201);
    expect(a.replay).toBe(true);
    expect(json(a)).toEqual(json(b));
    expect(store.countReports()).toBe(1);
  });

  it('a stale finisher that arrives while the new holder still works gets 409 and writes nothing', async () => {
    const { store, clock, inst } = setup();
    const envA = new TestEnv(clock, ['finish']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    clock.ms += 600;
    const envB = new TestEnv(clock, ['finish']);
    const pB = post(inst, envB, { key: 'k' });
    await envB.reached('finish');
    envA.release('finish');
    expect((await pA).status).toBe(409);
    expect(store.countReports()).toBe(0);
    envB.release('finish');
    expect((await pB).status).toBe(201);
    expect(store.countReports()).toBe(1);
  });

  it('with fencing off the stale finisher commits a second report (the canary)', async () => {
    const { store, clock, inst } = setup('key_atomic_nofence');
    const envA = new TestEnv(clock, ['finish']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    clock.ms += 600;
    const b = await post(inst, new TestEnv(clock), { key: 'k' });
    expect(b.status).toBe(201);
    envA.release('finish');
    const a = await pA;
    expect(a.status).toBe(201);
    expect(a.replay).toBeUndefined();
    expect(json(a)).toEqual({ report_id: 2 });
    expect(store.countReports()).toBe(2);
  });

  it('a killed request (never resumed) keeps its placeholder until the lease expires', async () => {
    const { store, clock, inst } = setup();
    const envA = new TestEnv(clock, ['process']);
    void post(inst, envA, { key: 'k' }); // killed: never released
    await envA.reached('process');
    inst.restart();
    expect((await post(inst, new TestEnv(clock), { key: 'k' })).status).toBe(409);
    clock.ms += 500;
    const retry = await post(inst, new TestEnv(clock), { key: 'k' });
    expect(retry.status).toBe(201);
    expect(store.getKeyRow(K)?.fence).toBe(2);
    expect(store.countReports()).toBe(1);
  });

  it('a clock-skewed second instance sees the lease as expired and takes over', async () => {
    const { store, clock, inst } = setup();
    const skewed = new TrackerInstance({
      variant: 'key_atomic', db: store, leaseMs: 500, allowUnsafeLease: true, name: 'b', faults: { clockOffsetMs: 1000 },
    });
    const envA = new TestEnv(clock, ['finish']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    const b = await post(skewed, new TestEnv(clock), { key: 'k' });
    expect(b.status).toBe(201);
    expect(b.headers['x-instance']).toBe('b');
    expect(store.getReport(1)?.created_at).toBe(1000);
    envA.release('finish');
    expect((await pA).replay).toBe(true);
    expect(store.countReports()).toBe(1);
  });
});

describe('the guard canaries: each breaks exactly its guard', () => {
  /** A stalls before its finish past the lease, B takes over and is parked before its own finish. */
  async function staleAndTaker(variant: Parameters<typeof setupVariant>[0]) {
    const { store, clock, inst } = setupVariant(variant);
    const envA = new TestEnv(clock, ['finish']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    clock.ms += 500;
    const envB = new TestEnv(clock, ['finish']);
    const pB = post(inst, envB, { key: 'k' });
    await envB.reached('finish');
    return { store, envA, pA, envB, pB };
  }

  it('key_atomic: the stale holder loses its finish to the fence (409), the taker files the one report', async () => {
    const { store, envA, pA, envB, pB } = await staleAndTaker('key_atomic');
    envA.release('finish');
    expect((await pA).status).toBe(409);
    envB.release('finish');
    expect((await pB).status).toBe(201);
    expect(store.countReports()).toBe(1);
  });

  it('key_atomic_unfenced_finish: the stale holder wins the finish instead, and the taker replays it — still one report', async () => {
    const { store, envA, pA, envB, pB } = await staleAndTaker('key_atomic_unfenced_finish');
    envA.release('finish');
    expect((await pA).status).toBe(201);
    envB.release('finish');
    const b = await pB;
    expect(b.status).toBe(201);
    expect(b.replay).toBe(true);
    expect(store.countReports()).toBe(1);
  });

  it('key_atomic_early_takeover: a request is taken over after half the lease', async () => {
    const { store, clock, inst } = setupVariant('key_atomic_early_takeover');
    const envA = new TestEnv(clock, ['finish']);
    void post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    clock.ms += 250;
    const envB = new TestEnv(clock, ['finish']);
    void post(inst, envB, { key: 'k' });
    await envB.reached('finish');
    expect(store.getKeyRow(K)?.fence).toBe(2);
  });

  it('key_atomic_no_expiry: a key in progress is never taken over', async () => {
    const { clock, inst } = setupVariant('key_atomic_no_expiry');
    const envA = new TestEnv(clock, ['finish']);
    void post(inst, envA, { key: 'k' });
    await envA.reached('finish');
    clock.ms += 1e9;
    expect((await post(inst, new TestEnv(clock), { key: 'k' })).status).toBe(409);
  });

  it('key_atomic_no_fingerprint: a second body under one key is answered with the first body’s result, not 422', async () => {
    const { inst } = setupVariant('key_atomic_no_fingerprint');
    await post(inst, new TestEnv(), { key: 'k' });
    const other = await post(inst, new TestEnv(), { key: 'k', body: JSON.stringify({ run_id: 'run-2', module: 'auth', title: 'other', steps: '' }) });
    expect(other.status).toBe(201);
    expect(other.replay).toBe(true);
  });
});

function setupVariant(variant: 'key_atomic' | 'key_atomic_unfenced_finish' | 'key_atomic_early_takeover' | 'key_atomic_no_expiry' | 'key_atomic_no_fingerprint') {
  const store = openStore();
  const clock = new TestClock();
  const inst = new TrackerInstance({ variant, db: store, leaseMs: 500, allowUnsafeLease: true });
  return { store, clock, inst };
}
