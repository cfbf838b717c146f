import type { Prng } from './prng.js';

/*
 * Standard normal draws by the Marsaglia–Tsang ziggurat (128 layers). Most
 * draws cost one 32-bit integer, one table lookup and one multiply — about
 * four times cheaper than Box–Muller's log, sqrt and sin — which matters for
 * the herd model, where every message hop is a normal draw. Math.exp/log are
 * only touched on the rare slow path; V8 implements them with fdlibm ports,
 * so results agree across machines.
 */

const R = 3.442619855899;
const V = 9.91256303526217e-3;
const M1 = 2147483648.0;

/** kn: acceptance thresholds; wn: layer widths scaled to int32; fn: densities. */
const kn = new Float64Array(128);
const wn = new Float64Array(128);
const fn = new Float64Array(128);

(function buildTables() {
  let dn = R;
  let tn = dn;
  const q = V / Math.exp(-0.5 * dn * dn);
  kn[0] = (dn / q) * M1;
  kn[1] = 0;
  wn[0] = q / M1;
  wn[127] = dn / M1;
  fn[0] = 1.0;
  fn[127] = Math.exp(-0.5 * dn * dn);
  for (let i = 126; i >= 1; i--) {
    dn = Math.sqrt(-2.0 * Math.log(V / dn + Math.exp(-0.5 * dn * dn)));
    kn[i + 1] = (dn / tn) * M1;
    tn = dn;
    fn[i] = Math.exp(-0.5 * dn * dn);
    wn[i] = dn / M1;
  }
})();

/**
 * One standard normal draw N(0, 1). Only the common case (about 98.8 % of
 * draws: one 32-bit integer inside its layer's rectangle) lives here, so the
 * function stays small enough for the JIT to inline into hot loops; the
 * wedges and the tail are in {@link normalSlow}. Same draws either way.
 */
export function standardNormal(rng: Prng): number {
  const hz = rng.nextI32();
  const iz = hz & 127;
  if (Math.abs(hz) < kn[iz]!) return hz * wn[iz]!;
  // The slow path's result comes back through memory, not as a return
  // value: a call that is not inlined returns a tagged value, and merging
  // it with the fast path's raw double made V8 box *every* draw (a 16-byte
  // heap number per call — the herd's main source of garbage).
  normalSlow(rng, hz, iz);
  return slowOut[0]!;
}

const slowOut = new Float64Array(1);

/** The rejection part of the ziggurat: `hz` missed the rectangle of layer `iz`. Result in `slowOut[0]`. */
function normalSlow(rng: Prng, hz: number, iz: number): void {
  slowOut[0] = normalReject(rng, hz, iz);
}

function normalReject(rng: Prng, hz: number, iz: number): number {
  for (;;) {
    const x = hz * wn[iz]!;
    if (iz === 0) {
      // The base strip's tail beyond R, sampled by Marsaglia's method.
      let tx: number;
      let ty: number;
      do {
        tx = -Math.log(1 - rng.next32()) / R;
        ty = -Math.log(1 - rng.next32());
      } while (ty + ty < tx * tx);
      return hz > 0 ? R + tx : -R - tx;
    }
    if (fn[iz]! + rng.next32() * (fn[iz - 1]! - fn[iz]!) < Math.exp(-0.5 * x * x)) return x;
    hz = rng.nextI32();
    iz = hz & 127;
    if (Math.abs(hz) < kn[iz]!) return hz * wn[iz]!;
  }
}

/** Normal draw with the given mean and standard deviation. */
export function normal(rng: Prng, mean: number, sd: number): number {
  return mean + sd * standardNormal(rng);
}

/** |Normal(mean, sd)|: the herd model's one-way latency. */
export function absNormal(rng: Prng, mean: number, sd: number): number {
  return Math.abs(mean + sd * standardNormal(rng));
}
