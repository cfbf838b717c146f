/**
 * Retry amplification across layers (SPEC §6): L services stacked on one
 * backend, each retrying independently. When the backend fails, every layer
 * multiplies the attempts of the layer below, so one logical call reaches
 * the backend A₁·A₂·…·A_L times (3^5 = 243). A retry budget or a token
 * bucket per layer, shared by all concurrent calls through that layer,
 * bounds the product.
 *
 * The model runs on the kernel: one task per logical call; the call enters
 * layer 1, whose {@link retryLoop} calls layer 2, …, and layer L calls the
 * backend. A failed layer answers UNAVAILABLE to the layer above, as a proxy
 * would. Hops between layers take no time; a backend request takes
 * U[1, 3) ms; backoff is the harness's Full Jitter (base 20 ms, cap 200 ms);
 * calls arrive uniformly over `arrivalSpreadMs`.
 */
import { Kernel } from '../sim/kernel.js';
import { expoMs } from '../backoff/strategies.js';
import { classifyGrpc, type GrpcCode } from './classify.js';
import { retryLoop } from './loop.js';
import { RetryBudget, type RetryBudgetOptions } from './budget.js';
import { TokenBucket, type TokenBucketOptions } from './token-bucket.js';
import type { RetryThrottle } from './throttle.js';

/** How each layer limits its retries. */
export const CONTROLS = ['none', 'ratio', 'token-bucket'] as const;
/** One of {@link CONTROLS}: no limit, a 10 % {@link RetryBudget}, or an AWS-style {@link TokenBucket}. */
export type Control = (typeof CONTROLS)[number];

/** True when `s` is one of {@link CONTROLS}. */
export function isControl(s: string): s is Control {
  return (CONTROLS as readonly string[]).includes(s);
}

/** Options of {@link simulateAmplification}. Defaults: a fully failing backend, no control. */
export interface AmplificationOptions {
  /** The run's one seed. */
  seed: number;
  /** Attempts (including the first) of each layer, outermost first; its length is the number of layers. */
  attempts: readonly number[];
  /** Logical calls, sharing each layer's throttle. */
  calls: number;
  /** Probability that one backend request fails, in [0, 1]. Default 1 (always fails). */
  failureRate?: number;
  /** Retry control in every layer. Default `'none'`. */
  control?: Control;
  /** Options of each layer's {@link RetryBudget} when control is `'ratio'`. Default: 10 %, 10 s window. */
  budget?: RetryBudgetOptions;
  /** Options of each layer's {@link TokenBucket} when control is `'token-bucket'`. Default: AWS standard (500 tokens, 5 per retry). */
  bucket?: TokenBucketOptions;
  /** Calls start uniformly in [0, arrivalSpreadMs). Default 1000. */
  arrivalSpreadMs?: number;
}

/** What one run of the model counted. */
export interface AmplificationResult {
  layers: number;
  attempts: number[];
  calls: number;
  failureRate: number;
  control: Control;
  /** Requests that reached the backend. */
  backendRequests: number;
  /** backendRequests / calls. */
  requestsPerCall: number;
  /** Requests each layer sent to the layer below (index 0 = outermost); the last is backendRequests. */
  layerRequests: number[];
  /** Of those, retries (attempts after the first). */
  layerRetries: number[];
  /** Logical calls that succeeded in the end. */
  succeeded: number;
  /** The uncontrolled expectation, {@link expectedRequestsPerCall} (= ∏ Aᵢ when failureRate is 1). */
  closedForm: number;
  /** Virtual time when the last call ended, ms. */
  timeMs: number;
}

/**
 * Expected backend requests per logical call with no retry control, for
 * independent backend failures with probability `p`. A call into a layer
 * whose sub-call fails with probability q makes attempt i with probability
 * q^(i−1), and each attempt costs (in expectation) what one sub-call costs,
 * so E = ∏ₗ (1 + qₗ + … + qₗ^(Aₗ−1)), where q for the innermost layer is p
 * and a layer fails with q^A. For p = 1 this is exactly ∏ Aₗ.
 *
 * @example
 * expectedRequestsPerCall([3, 3, 3, 3, 3], 1) // 243
 * expectedRequestsPerCall([4, 3], 1)          // 12
 */
export function expectedRequestsPerCall(attempts: readonly number[], p: number): number {
  let e = 1;
  let q = p; // failure probability of one call into the layer below the current one
  for (let l = attempts.length - 1; l >= 0; l--) {
    const a = attempts[l]!;
    let s = 0;
    for (let i = 0, qi = 1; i < a; i++, qi *= q) s += qi;
    e *= s;
    q = q ** a;
  }
  return e;
}

/** `layers` copies of `attempts`: the uniform stack of the SPEC's figures. */
export function uniformStack(layers: number, attempts: number): number[] {
  return Array.from({ length: layers }, () => attempts);
}

function checkOptions(o: AmplificationOptions): void {
  if (o.attempts.length < 1) throw new RangeError('simulateAmplification: at least one layer');
  for (const a of o.attempts) if (!(Number.isInteger(a) && a >= 1)) throw new RangeError(`simulateAmplification: attempts must be integers >= 1, got ${a}`);
  if (!(Number.isInteger(o.calls) && o.calls >= 1)) throw new RangeError(`simulateAmplification: calls must be an integer >= 1, got ${o.calls}`);
  const p = o.failureRate ?? 1;
  if (!(p >= 0 && p <= 1)) throw new RangeError(`simulateAmplification: failureRate must be in [0, 1], got ${p}`);
}

function throttleFor(o: AmplificationOptions): RetryThrottle | undefined {
  switch (o.control ?? 'none') {
    case 'none':
      return undefined;
    case 'ratio':
      return new RetryBudget(o.budget);
    case 'token-bucket':
      return new TokenBucket(o.bucket);
  }
}

/**
 * Runs the layered model once on a fresh kernel and counts requests per
 * layer. Deterministic in `seed`. With `failureRate` 1 and no control the
 * backend sees exactly calls × ∏ Aₗ requests, whatever the timing.
 *
 * @example
 * const r = await simulateAmplification({ seed: 1, attempts: [3, 3, 3, 3, 3], calls: 10 });
 * r.requestsPerCall // 243
 */
export async function simulateAmplification(o: AmplificationOptions): Promise<AmplificationResult> {
  checkOptions(o);
  const attempts = [...o.attempts];
  const layers = attempts.length;
  const p = o.failureRate ?? 1;
  const spread = o.arrivalSpreadMs ?? 1000;
  const k = new Kernel({ seed: o.seed, trace: false, replayHint: `retrysim amplify --seed ${o.seed}` });
  const arrivals = k.fork('arrivals');
  const backend = k.fork('backend');
  const backoff = k.fork('backoff');
  // One throttle per layer, shared by every call passing through it.
  const throttles = attempts.map(() => throttleFor(o));
  const layerRequests = attempts.map(() => 0);
  const layerRetries = attempts.map(() => 0);
  let succeeded = 0;

  const callBackend = async (): Promise<{ ok: true; value: true } | { ok: false; error: GrpcCode }> => {
    await k.sleep(backend.uniform(1, 3));
    return backend.next() < p ? { ok: false, error: 'UNAVAILABLE' } : { ok: true, value: true };
  };
  const callLayer = async (l: number): Promise<{ ok: true; value: true } | { ok: false; error: GrpcCode }> => {
    const r = await retryLoop<true, GrpcCode>({
      maxAttempts: attempts[l]!,
      now: () => k.now,
      sleep: (ms) => k.sleep(ms),
      attempt: (n) => {
        layerRequests[l]!++;
        if (n > 1) layerRetries[l]!++;
        return l + 1 < layers ? callLayer(l + 1) : callBackend();
      },
      classify: (code, budgetLeft) => classifyGrpc(code, { budgetLeft, idempotent: true }),
      backoffMs: (n) => expoMs(n, 20, 200) * backoff.next(),
      throttle: throttles[l],
    });
    return r.ok ? r : { ok: false, error: 'UNAVAILABLE' };
  };

  // Each call's task is spawned at its arrival time, not all at t = 0 to
  // sleep: thousands of tasks runnable at once would make every scheduling
  // choice list them all.
  const arrive = k.on((c) => {
    k.spawn(`call${c}`, async () => {
      if ((await callLayer(0)).ok) succeeded++;
    });
  });
  for (let c = 0; c < o.calls; c++) k.at(arrivals.uniform(0, spread), arrive, c);
  const run = await k.run();
  const backendRequests = layerRequests[layers - 1]!;
  return {
    layers,
    attempts,
    calls: o.calls,
    failureRate: p,
    control: o.control ?? 'none',
    backendRequests,
    requestsPerCall: backendRequests / o.calls,
    layerRequests,
    layerRetries,
    succeeded,
    closedForm: expectedRequestsPerCall(attempts, p),
    timeMs: run.timeMs,
  };
}

/** One row of {@link amplificationTable}: a control and its runs for 1..N layers. */
export interface AmplificationRow {
  control: Control;
  /** The throttle's display name, e.g. `retry budget 10 %`. */
  name: string;
  /** cells[i] is the run with the first i + 1 layers of the stack. */
  cells: AmplificationResult[];
}

/**
 * Runs the model for every control in `controls` and every depth 1..N of
 * the stack (depth d keeps the outermost d layers), with the same seed.
 */
export async function amplificationTable(o: Omit<AmplificationOptions, 'control'> & { controls: readonly Control[] }): Promise<AmplificationRow[]> {
  const rows: AmplificationRow[] = [];
  for (const control of o.controls) {
    const cells: AmplificationResult[] = [];
    for (let d = 1; d <= o.attempts.length; d++) cells.push(await simulateAmplification({ ...o, control, attempts: o.attempts.slice(0, d) }));
    rows.push({ control, name: throttleFor({ ...o, control })?.name ?? 'no control', cells });
  }
  return rows;
}
