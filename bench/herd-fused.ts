import { Prng } from '../src/random/prng.js';
import { standardNormal } from '../src/random/normal.js';
import { strategyDelayMs } from '../src/backoff/strategies.js';
import type { StrategyCode } from '../src/backoff/strategies.js';

/**
 * The herd model hand-fused into one function — no kernel, no handler, no
 * queue object: every array a local, the tournament tree's replay written
 * into the loop. It exists only to measure how fast this algorithm can go in
 * JavaScript on this machine (the ceiling the kernel's callback path is
 * compared with in `npm run bench -- herd`). It must give exactly what
 * `runHerd` gives for the same seed — the bench checks that before timing
 * it — so the figure is for the same work, event for event.
 */
export function fusedHerd(clients: number, code: StrategyCode, seed: number): { calls: number; ms: number; events: number } {
  const rng = new Prng(seed).fork('herd'); // as Kernel.fork('herd')
  let cap = 2;
  while (cap < clients) cap *= 2;
  const t = new Float64Array(cap).fill(Infinity);
  const seq = new Float64Array(cap).fill(Infinity);
  const pay = new Float64Array(cap);
  const kind = new Int32Array(cap);
  const win = new Int32Array(2 * cap);
  const attempt = new Int32Array(cap);
  const prev = new Float64Array(cap).fill(5);
  let nseq = 0;
  for (let c = 0; c < clients; c++) {
    t[c] = Math.abs(10 + 2 * standardNormal(rng));
    seq[c] = nseq++;
  }
  for (let s = 0; s < cap; s++) win[cap + s] = s;
  for (let i = cap - 1; i >= 1; i--) {
    const l = win[2 * i]!;
    const r = win[2 * i + 1]!;
    win[i] = t[r]! < t[l]! || (t[r] === t[l] && seq[r]! < seq[l]!) ? r : l;
  }
  let version = 0;
  let calls = 0;
  let events = 0;
  let now = 0;
  let live = clients;
  while (live > 0) {
    const c = win[1]!; // one pending message per client: slot = client
    now = t[c]!;
    events++;
    const k = kind[c]!;
    let p = 0;
    let nk = k + 1;
    let nt: number;
    if (k === 3 && pay[c] !== 0) {
      nt = Infinity; // write succeeded: the client is done
      seq[c] = Infinity;
      live--;
    } else {
      if (k === 0) p = version;
      else if (k === 1) p = pay[c]!;
      else if (k === 2) {
        calls++;
        if (pay[c] === version) {
          version++;
          p = 1;
        }
      } else nk = 0;
      nt = now + Math.abs(10 + 2 * standardNormal(rng));
      if (nk === 0) {
        const d = strategyDelayMs(code, ++attempt[c]!, 5, 2000, rng, prev[c]!);
        prev[c] = d;
        nt += d;
      }
      seq[c] = nseq++;
    }
    t[c] = nt;
    kind[c] = nk;
    pay[c] = p;
    let cur = c;
    let node = cap + c;
    while (node > 1) {
      const o = win[node ^ 1]!;
      const ot = t[o]!;
      const ct = t[cur]!;
      let lt = +(ot < ct);
      if (ot === ct) lt = +(seq[o]! < seq[cur]!);
      cur ^= (cur ^ o) & -lt;
      node >>= 1;
      win[node] = cur;
    }
  }
  return { calls, ms: now, events };
}
