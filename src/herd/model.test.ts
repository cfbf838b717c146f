import { describe, expect, test } from 'vitest';
import { Prng } from '../random/prng.js';
import { absNormal } from '../random/normal.js';
import { createBackoff, STRATEGY_NAMES } from '../backoff/strategies.js';
import type { StrategyName } from '../backoff/strategies.js';
import { runHerd, WriteHistogram } from './model.js';

/**
 * A line-by-line transliteration of backoff_simulator.py (aws-samples/
 * aws-arch-backoff-simulator): message tuples, server and client objects,
 * a plain sorted array as the heap. Fed the same random stream, it must
 * agree with the kernel model exactly.
 */
function referenceSim(clients: number, strategy: StrategyName, seed: number): { calls: number; tm: number; writes: number[] } {
  const rng = new Prng(seed).fork('herd');
  const delay = (): number => absNormal(rng, 10, 2);
  type Msg = [number, (tm: number, m: Msg) => Msg | null, ((tm: number, m: Msg) => Msg | null) | null, unknown];
  const stats = { calls: 0, failures: 0 };
  const writes: number[] = [];
  const server = {
    version: 0,
    write(tm: number, req: Msg): Msg {
      writes.push(tm);
      let success = false;
      stats.calls += 1;
      if (req[3] === server.version) {
        server.version += 1;
        success = true;
      } else stats.failures += 1;
      return [tm + delay(), req[2]!, null, success];
    },
    read(tm: number, req: Msg): Msg {
      return [tm + delay(), req[2]!, null, server.version];
    },
  };
  const makeClient = () => {
    const backoff = createBackoff(strategy, { baseMs: 5, capMs: 2000 });
    const c = {
      attempt: 0,
      start: (tm: number): Msg => [tm + delay(), server.read, c.readRsp, null],
      readRsp: (tm: number, req: Msg): Msg => [tm + delay(), server.write, c.writeRsp, req[3]],
      writeRsp: (tm: number, req: Msg): Msg | null => {
        if (!req[3]) {
          c.attempt += 1;
          const t = tm + delay();
          return [t + backoff.delayMs(c.attempt, rng), server.read, c.readRsp, null];
        }
        return null;
      },
    };
    return c;
  };
  const queue: Msg[] = [];
  const push = (m: Msg): void => {
    let i = queue.length;
    while (i > 0 && queue[i - 1]![0] > m[0]) i--;
    queue.splice(i, 0, m);
  };
  for (let i = 0; i < clients; i++) push(makeClient().start(0));
  let tm = 0;
  while (queue.length > 0) {
    const m = queue.shift()!;
    expect(m[0]).toBeGreaterThanOrEqual(tm);
    tm = m[0];
    const next = m[1](tm, m);
    if (next !== null) push(next);
  }
  return { calls: stats.calls, tm, writes };
}

describe('herd model', () => {
  test.each(STRATEGY_NAMES.map((s) => [s]))('%s: identical to a transliteration of the AWS reference simulator', async (strategy) => {
    for (const clients of [1, 7, 30]) {
      for (const seed of [1, 2, 3]) {
        const ref = referenceSim(clients, strategy, seed);
        const hist = new WriteHistogram();
        const r = await runHerd({ clients, strategy }, seed, hist);
        expect(r.calls).toBe(ref.calls);
        expect(r.ms).toBe(ref.tm);
        const refHist = new WriteHistogram();
        for (const t of ref.writes) refHist.add(t);
        expect(hist.toArray()).toEqual(refHist.toArray());
      }
    }
  });

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
