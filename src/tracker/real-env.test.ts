import { describe, expect, it } from 'vitest';
import { TrackerInstance } from './instance.js';
import { plainDeferred, realEnv } from './real-env.js';
import { openStore } from './store.js';
import { post } from './test-env.js';

describe('realEnv', () => {
  it('serves a request with wall-clock time and real timers', async () => {
    const store = openStore();
    const inst = new TrackerInstance({ variant: 'key_atomic', db: store, faults: { slowMs: 5 } });
    const env = realEnv();
    const before = env.now();
    const res = await post(inst, env, { key: 'k' });
    expect(res.status).toBe(201);
    expect(env.now() - before).toBeGreaterThanOrEqual(4);
    expect(store.getReport(1)!.created_at).toBeGreaterThanOrEqual(before);
  });

  it('a rejected Deferred nobody waits for is not an unhandled rejection', async () => {
    const d = plainDeferred<number>();
    d.reject(new Error('nobody listens'));
    const e = plainDeferred<number>();
    e.resolve(7);
    expect(await e.wait()).toBe(7);
    await expect(d.wait()).rejects.toThrow('nobody listens');
  });
});
