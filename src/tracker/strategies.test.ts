import { describe, expect, it } from 'vitest';
import { TrackerInstance } from './instance.js';
import { REPLAY_HEADER } from './messages.js';
import { openStore } from './store.js';
import { VARIANTS, type Variant } from './strategy.js';
import { json, post, reportBody, TestEnv } from './test-env.js';
import { createStrategy, STEP_LABELS } from './variants.js';

const KEYED: Variant[] = ['key_split', 'key_atomic', 'key_atomic_nofence', 'memory_singleflight'];

function setup(variant: Variant) {
  const store = openStore();
  return { store, inst: new TrackerInstance({ variant, db: store }) };
}

describe.each(VARIANTS)('%s', (variant) => {
  it('files a report: 201 {"report_id": 1}, steps labelled as documented', async () => {
    if (variant === 'key_atomic_refuse_keyed') return; // refuses every keyed write by design (tested below)
    const { store, inst } = setup(variant);
    const env = new TestEnv();
    const res = await post(inst, env, { key: 'k1' });
    expect(res.status).toBe(201);
    expect(json(res)).toEqual({ report_id: 1 });
    expect(res.replay).toBeUndefined();
    expect(env.steps).toEqual(STEP_LABELS[variant]);
    expect(createStrategy(variant).stepLabels).toEqual(STEP_LABELS[variant]);
    expect(store.getReport(1)).toMatchObject({ run_id: 'run-1', title: 'login fails', steps: '1. open\n2. click' });
  });

  it('without a key every request files a report', async () => {
    const { store, inst } = setup(variant);
    await post(inst, new TestEnv());
    await post(inst, new TestEnv());
    expect(store.countReports()).toBe(2);
    expect(store.keyRows()).toHaveLength(0);
  });
});

describe('naive', () => {
  it('ignores the key: a retry files a second report', async () => {
    const { store, inst } = setup('naive');
    await post(inst, new TestEnv(), { key: 'k' });
    const again = await post(inst, new TestEnv(), { key: 'k' });
    expect(again.status).toBe(201);
    expect(store.countReports()).toBe(2);
  });
});

describe.each(KEYED)('%s with a key', (variant) => {
  it('replays the stored response to a retry, marked as a replay', async () => {
    const { store, inst } = setup(variant);
    await post(inst, new TestEnv(), { key: 'k' });
    const env = new TestEnv();
    const again = await post(inst, env, { key: 'k', body: JSON.stringify(JSON.parse(reportBody())) });
    expect(again.status).toBe(201);
    expect(json(again)).toEqual({ report_id: 1 });
    expect(again.replay).toBe(true);
    expect(again.headers[REPLAY_HEADER]).toBe('true');
    expect(store.countReports()).toBe(1);
  });

  it('a body with the same fields in another order is the same request', async () => {
    const { store, inst } = setup(variant);
    await post(inst, new TestEnv(), { key: 'k' });
    const reordered = '{"steps":"1. open\\n2. click","title":"login fails","module":"auth","run_id":"run-1"}';
    expect((await post(inst, new TestEnv(), { key: 'k', body: reordered })).replay).toBe(true);
    expect(store.countReports()).toBe(1);
  });

  it('same key, different body → 422, nothing written', async () => {
    const { store, inst } = setup(variant);
    await post(inst, new TestEnv(), { key: 'k' });
    const res = await post(inst, new TestEnv(), { key: 'k', body: reportBody({ title: 'reworded' }) });
    expect(res.status).toBe(422);
    expect(String(json(res).error)).toContain('idempotency-key');
    expect(store.countReports()).toBe(1);
  });

  it('tenant "a" with key "x/y" never sees tenant "a/x" with key "y" (nor the default tenant)', async () => {
    const { store, inst } = setup(variant);
    const first = await post(inst, new TestEnv(), { tenant: 'a/x', key: 'y' });
    const other = await post(inst, new TestEnv(), { tenant: 'a', key: 'x/y' });
    const third = await post(inst, new TestEnv(), { key: 'a/x/y' });
    expect([first, other, third].map((r) => [r.status, r.replay])).toEqual([
      [201, undefined],
      [201, undefined],
      [201, undefined],
    ]);
    expect(store.countReports()).toBe(3);
    // And a different body under the other tenant is not a 422 either.
    const diff = await post(inst, new TestEnv(), { tenant: 'b', key: 'y', body: reportBody({ title: 'z' }) });
    expect(diff.status).toBe(201);
  });
});

describe('key_split', () => {
  it('a concurrent second registration hits the primary key → 500, and both reports stay', async () => {
    const { store, inst } = setup('key_split');
    const envA = new TestEnv(undefined, ['register']);
    const pA = post(inst, envA, { key: 'k' });
    await envA.reached('register');
    const b = await post(inst, new TestEnv(), { key: 'k' });
    expect(b.status).toBe(201);
    envA.release('register');
    const a = await pA;
    expect(a.status).toBe(500);
    expect(String(json(a).error)).toContain('registered concurrently');
    expect(store.countReports()).toBe(2);
    expect(store.keyRows()).toHaveLength(1);
  });
});

describe('key_atomic_refuse_keyed (the progress canary)', () => {
  it('answers 409 to every keyed write and writes nothing; unkeyed writes still work', async () => {
    const { store, inst } = setup('key_atomic_refuse_keyed');
    expect((await post(inst, new TestEnv(), { key: 'k1' })).status).toBe(409);
    expect(store.countReports()).toBe(0);
    expect(store.keyRows()).toHaveLength(0);
    expect((await post(inst, new TestEnv())).status).toBe(201);
  });
});
