import { describe, expect, test } from 'vitest';
import { DEFAULT_CLIENTS, DEFAULT_STRATEGIES, meanSe, runGrid } from './grid.js';
import type { CellResult } from './grid.js';

describe('herd grid', () => {
  test('fidelity: the AWS blog shape on the default grid (30 runs per cell)', async () => {
    const { cells } = await runGrid({ strategies: DEFAULT_STRATEGIES, clients: DEFAULT_CLIENTS, runs: 30, seed: 2015, workers: 0 });
    const at = (s: string, n: number): CellResult => cells.find((c) => c.strategy === s && c.clients === n)!;
    for (const n of DEFAULT_CLIENTS) {
      // No jitter is by far the slowest (≥ 3× any jittered strategy).
      for (const s of ['equal', 'full', 'decorrelated']) expect(at('expo', n).ms).toBeGreaterThan(3 * at(s, n).ms);
      // No backoff: fastest to finish in this no-overload model, most calls.
      for (const s of DEFAULT_STRATEGIES) if (s !== 'none') expect(at('none', n).ms).toBeLessThan(at(s, n).ms);
    }
    for (const n of [50, 100]) {
      // Full jitter makes the fewest calls at 50–100 clients (none excluded: always most).
      for (const s of ['expo', 'codex', 'equal', 'decorrelated']) expect(at('full', n).calls).toBeLessThan(at(s, n).calls);
      // Decorrelated finishes before full but makes more calls.
      expect(at('decorrelated', n).ms).toBeLessThan(at('full', n).ms);
      expect(at('decorrelated', n).calls).toBeGreaterThan(at('full', n).calls);
      expect(at('none', n).calls).toBeGreaterThan(2 * at('full', n).calls);
      // Small jitter (codex ±10 %) leaves expo's clustering: slower than equal/full.
      expect(at('codex', n).ms).toBeGreaterThan(at('equal', n).ms);
    }
    // Orders of magnitude seen in the reference simulator (one client: one call).
    expect(at('full', 100).calls).toBeGreaterThan(600);
    expect(at('full', 100).calls).toBeLessThan(1000);
    for (const c of cells) {
      expect(c.runs).toBe(30);
      expect(c.events).toBeGreaterThan(0);
      expect(c.callsSe).toBeGreaterThan(0);
    }
  }, 60_000);

  test('the same seed gives bit-identical cells with 0 or 1 worker threads', async () => {
    const opts = { strategies: ['codex', 'decorrelated'] as const, clients: [5, 20], runs: 30, seed: 77, histograms: true };
    const a = await runGrid({ ...opts, workers: 0 });
    const b = await runGrid({ ...opts, workers: 1 });
    expect(b.workers).toBe(1);
    expect(b.cells).toEqual(a.cells);
    expect(b.events).toBe(a.events);
  }, 60_000);

  test('meanSe: mean and sample standard error', () => {
    expect(meanSe([1, 2, 3, 4])).toEqual({ mean: 2.5, se: Math.sqrt(5 / 3 / 4) });
    expect(meanSe([7])).toEqual({ mean: 7, se: 0 });
  });
});
