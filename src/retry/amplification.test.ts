import { describe, expect, it } from 'vitest';
import { amplificationTable, expectedRequestsPerCall, simulateAmplification, uniformStack } from './amplification.js';

describe('retry amplification across layers (SPEC §6), counted by the simulation', () => {
  it.each([
    ['3 attempts × 5 layers = 3^5 = 243', uniformStack(5, 3), 243],
    ['3 layers × 3 attempts = 27', uniformStack(3, 3), 27],
    ['harness 4 × SDK 3 = 12', [4, 3], 12],
  ])('%s backend requests per logical call', async (_, attempts, figure) => {
    const r = await simulateAmplification({ seed: 7, attempts, calls: 20 });
    expect(r.backendRequests).toBe(20 * figure);
    expect(r.requestsPerCall).toBe(figure);
    expect(r.succeeded).toBe(0);
    // Every layer multiplies: layer l sends calls × A₁·…·A_l requests.
    expect(r.layerRequests).toEqual(attempts.map((_, l) => 20 * attempts.slice(0, l + 1).reduce((a, b) => a * b, 1)));
  });

  it('a healthy backend sees exactly one request per call, whatever the depth', async () => {
    const r = await simulateAmplification({ seed: 1, attempts: uniformStack(4, 3), calls: 50, failureRate: 0 });
    expect(r.requestsPerCall).toBe(1);
    expect(r.succeeded).toBe(50);
  });

  it('a 10 % retry budget per layer keeps each layer near 1.11× instead of 3×', async () => {
    const r = await simulateAmplification({ seed: 1, attempts: uniformStack(5, 3), calls: 500, control: 'ratio' });
    for (let l = 0; l < 5; l++) {
      const incoming = l === 0 ? 500 : r.layerRequests[l - 1]!;
      expect(r.layerRetries[l]!).toBeLessThanOrEqual(0.1 * r.layerRequests[l]! + 1e-9);
      expect(r.layerRequests[l]! / incoming).toBeGreaterThan(1.09);
      expect(r.layerRequests[l]! / incoming).toBeLessThanOrEqual(1 / 0.9 + 1e-9);
    }
    expect(r.requestsPerCall).toBeLessThanOrEqual((1 / 0.9) ** 5);
    expect(r.timeMs).toBeLessThan(10_000); // the whole run fits one window, so the bound above is the exact one
  });

  it('a token bucket per layer grants at most 100 retries per layer while the backend fails', async () => {
    const r = await simulateAmplification({ seed: 1, attempts: uniformStack(3, 3), calls: 400, control: 'token-bucket' });
    expect(r.layerRetries).toEqual([100, 100, 100]);
    expect(r.backendRequests).toBe(400 + 300);
  });

  it('matches the closed-form expectation under partial failure', async () => {
    const attempts = [4, 3];
    const r = await simulateAmplification({ seed: 3, attempts, calls: 4000, failureRate: 0.5 });
    expect(expectedRequestsPerCall(attempts, 0.5)).toBeCloseTo(2.0, 1);
    expect(Math.abs(r.requestsPerCall - r.closedForm)).toBeLessThan(0.1);
    expect(expectedRequestsPerCall([4], 0.5)).toBe(1.875);
    expect(expectedRequestsPerCall(uniformStack(5, 3), 1)).toBe(243);
  });

  it('is deterministic in its seed', async () => {
    const o = { attempts: [3, 3], calls: 100, failureRate: 0.7, control: 'ratio' as const };
    const a = await simulateAmplification({ seed: 5, ...o });
    expect(await simulateAmplification({ seed: 5, ...o })).toEqual(a);
    expect(await simulateAmplification({ seed: 6, ...o })).not.toEqual(a);
  });

  it('amplificationTable runs each control at every depth', async () => {
    const rows = await amplificationTable({ seed: 1, attempts: [4, 3], calls: 10, controls: ['none', 'ratio'] });
    expect(rows.map((r) => r.name)).toEqual(['no control', 'retry budget 10 %']);
    expect(rows[0]!.cells.map((c) => c.requestsPerCall)).toEqual([4, 12]);
  });

  it('rejects bad options', async () => {
    await expect(simulateAmplification({ seed: 1, attempts: [], calls: 1 })).rejects.toThrow(/layer/);
    await expect(simulateAmplification({ seed: 1, attempts: [0], calls: 1 })).rejects.toThrow(/attempts/);
    await expect(simulateAmplification({ seed: 1, attempts: [3], calls: 0 })).rejects.toThrow(/calls/);
    await expect(simulateAmplification({ seed: 1, attempts: [3], calls: 1, failureRate: 1.5 })).rejects.toThrow(/failureRate/);
  });
});
