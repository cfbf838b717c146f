import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { simulateAmplification, uniformStack, type AmplificationResult } from '../src/retry/amplification.js';
import { PROPERTY_SEED } from './support.js';

/**
 * The claim (SPEC §6). Each layer has its own 10 % retry budget, shared by
 * all calls through it, with a window longer than the run. A layer grants a
 * retry only if, counting it, retries ≤ 0.1 · requests; so at every layer
 * retries ≤ 0.1 · requests, i.e. requests ≤ incoming / (1 − 0.1), and
 * backend requests ≤ calls · (1/0.9)^L — about 1.11× per layer (1.69× at
 * five layers) instead of A× — whatever the attempts and the failure rate.
 */
const RATIO = 0.1;
const WINDOW_MS = 3_600_000;
const boundPerCall = (layers: number) => (1 / (1 - RATIO)) ** layers;

/** The bound, layer by layer; false when any layer amplifies more than 1/(1 − ratio). */
function budgetBoundHolds(r: AmplificationResult): boolean {
  let incoming = r.calls;
  for (let l = 0; l < r.layers; l++) {
    const sent = r.layerRequests[l]!;
    if (r.layerRetries[l]! > RATIO * sent + 1e-9) return false;
    if (sent > incoming / (1 - RATIO) + 1e-9) return false;
    incoming = sent;
  }
  return r.backendRequests <= r.calls * boundPerCall(r.layers) + 1e-9;
}

const stack = fc.record({
  layers: fc.integer({ min: 1, max: 5 }),
  attempts: fc.integer({ min: 1, max: 5 }),
  seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
});
const failureRate = fc.oneof(fc.constant(1), fc.double({ min: 0, max: 1, noNaN: true }));
const fcOpts = { seed: PROPERTY_SEED, numRuns: 60 };

describe('a retry budget bounds amplification across layers', () => {
  it('without control, a fully failing backend sees exactly A^L requests per logical call', async () => {
    await fc.assert(
      fc.asyncProperty(stack, async ({ layers, attempts, seed }) => {
        const r = await simulateAmplification({ seed, attempts: uniformStack(layers, attempts), calls: 2 });
        expect(r.backendRequests).toBe(2 * attempts ** layers);
      }),
      fcOpts,
    );
  });

  it('with a 10 % budget per layer, backend requests ≤ calls · (1/0.9)^L for any attempts and failure rate', async () => {
    await fc.assert(
      fc.asyncProperty(stack, failureRate, fc.integer({ min: 1, max: 300 }), async ({ layers, attempts, seed }, p, calls) => {
        const r = await simulateAmplification({ seed, attempts: uniformStack(layers, attempts), calls, failureRate: p, control: 'ratio', budget: { ratio: RATIO, windowMs: WINDOW_MS } });
        expect(r.timeMs).toBeLessThan(WINDOW_MS); // the hypothesis: one window covers the run
        expect(budgetBoundHolds(r)).toBe(true);
      }),
      fcOpts,
    );
  });

  it('canary: the same bound goes red without control (fully failing backend, A ≥ 2)', async () => {
    const out = await fc.check(
      fc.asyncProperty(stack, async ({ layers, attempts, seed }) => {
        const r = await simulateAmplification({ seed, attempts: uniformStack(layers, attempts), calls: 5 });
        return budgetBoundHolds(r);
      }),
      fcOpts,
    );
    expect(out.failed).toBe(true);
    // Shrinks to the smallest stack that amplifies: one layer, two attempts (2 > 1.11).
    const [cx] = out.counterexample!;
    expect([cx.layers, cx.attempts]).toEqual([1, 2]);
  });

  it('with a token bucket per layer and a fully failing backend, each layer adds at most capacity / cost retries', async () => {
    await fc.assert(
      fc.asyncProperty(stack, fc.integer({ min: 1, max: 300 }), async ({ layers, attempts, seed }, calls) => {
        const r = await simulateAmplification({ seed, attempts: uniformStack(layers, attempts), calls, control: 'token-bucket' });
        for (const retries of r.layerRetries) expect(retries).toBeLessThanOrEqual(500 / 5);
        expect(r.backendRequests).toBeLessThanOrEqual(calls + 100 * layers);
      }),
      fcOpts,
    );
  });
});
