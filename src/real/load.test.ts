import { describe, expect, it } from 'vitest';
import { runLoad } from './load.js';

// The small correctness version of the load test (the benchmark,
// bench/real.bench.ts, is the big one and reports requests/s).
describe('load with real crashes', () => {
  it('same- and different-key clients while the server is SIGKILLed twice: every operation ends with exactly one report, no acknowledged report lost', async () => {
    const r = await runLoad({ operations: 45, spreadMs: 2000, kills: 2, firstKillMs: 500, killEveryMs: 1300, wallMsMax: 40_000 });
    expect(r.killsSurvived).toBe(2);
    expect(r.outcomes.connection_refused ?? 0).toBeGreaterThan(0); // the kills were felt
    expect(r.unresolved).toBe(0);
    expect(r.notExactlyOne).toBe(0);
    expect(r.lostAcknowledged).toBe(0);
    expect(r.violations).toEqual([]);
    expect(r.workers).toBe(45 + 2 * 15); // every third operation has three same-key workers
  });
});
