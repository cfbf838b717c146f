import { describe, expect, test } from 'vitest';
import { STRATEGY_NAMES } from '../backoff/strategies.js';
import { runHerd } from './model.js';

describe('herd model', () => {
  // Agreement with an independent reading of SPEC §1–2 (no shared backoff
  // code) is in reference.test.ts; fidelity to the AWS simulator's own runs
  // in fidelity.test.ts.

  test('one client writes once: 4 events, 1 call', async () => {
    const r = await runHerd({ clients: 1, strategy: 'expo' }, 5);
    expect(r).toMatchObject({ calls: 1, events: 4 });
    expect(r.ms).toBeGreaterThan(20);
  });

  test('every attempt is four messages; every client succeeds once', async () => {
    for (const strategy of STRATEGY_NAMES) {
      const r = await runHerd({ clients: 20, strategy }, 11);
      expect(r.events).toBe(4 * r.calls);
      expect(r.calls).toBeGreaterThanOrEqual(20);
    }
  });

  test('the first backoff uses n = 1 (10 ms for expo): two clients, the loser reads again ~10 ms + a hop later', async () => {
    // With 2 clients one write fails; the run then takes about 4 hops
    // (first round) + hop + 10 ms backoff + 3 hops. Averaged over seeds,
    // ≈ 8 × 10 + 10 = 90 ms, vs 100 ms if the first backoff used n = 2.
    let sum = 0;
    let n = 0;
    for (let seed = 0; seed < 400; seed++) {
      const r = await runHerd({ clients: 2, strategy: 'expo' }, seed);
      if (r.calls === 3) {
        sum += r.ms;
        n++;
      }
    }
    expect(n).toBeGreaterThan(100);
    expect(sum / n).toBeGreaterThan(85);
    expect(sum / n).toBeLessThan(95);
  });

  test('same seed, same result; clients must be a positive integer', async () => {
    const a = await runHerd({ clients: 25, strategy: 'full' }, 99);
    const b = await runHerd({ clients: 25, strategy: 'full' }, 99);
    expect(a).toEqual(b);
    await expect(runHerd({ clients: 0, strategy: 'full' }, 1)).rejects.toThrow(/clients/);
  });

  test('runs started together do not share state (model objects are reused only when idle)', async () => {
    const one = [await runHerd({ clients: 30, strategy: 'decorrelated' }, 7), await runHerd({ clients: 5, strategy: 'expo' }, 8)];
    const together = await Promise.all([runHerd({ clients: 30, strategy: 'decorrelated' }, 7), runHerd({ clients: 5, strategy: 'expo' }, 8)]);
    expect(together).toEqual(one);
  });
});
