import { describe, expect, test } from 'vitest';
// Only the random stream is shared with the code under test: the seeded
// generator and its normal sampler are the *source* of draws here, not a
// formula being checked. Nothing from src/backoff, nor the herd's strategy
// code, is imported — the point of this file is a second, independent
// reading of SPEC §1–2.
import { Prng } from '../random/prng.js';
import { standardNormal } from '../random/normal.js';
import { runHerd, WriteHistogram } from './model.js';

type Strategy = Parameters<typeof runHerd>[0]['strategy'];
const STRATEGIES: readonly Strategy[] = ['none', 'expo', 'codex', 'equal', 'full', 'decorrelated'];

/** The draws the model is fed: `u()` is one U[0, 1) (53-bit), `hop()` one |Normal(10, 2)| ms latency. */
interface Draws {
  u(): number;
  hop(): number;
}

/** The stream runHerd consumes for `seed`: the kernel's root generator forked as 'herd'. */
function drawsOf(seed: number): Draws {
  const rng = new Prng(seed).fork('herd');
  return { u: () => rng.next(), hop: () => Math.abs(10 + 2 * standardNormal(rng)) };
}

/**
 * SPEC §1, written from the table and nothing else: `U[a, b)` is
 * `a + (b − a)·u`, `v_n = min(cap, base·2^n)`. Returns a client's
 * `backoff(n)`, with its own state (only decorrelated has any).
 */
function specBackoff(strategy: Strategy, base: number, cap: number, d: Draws): (n: number) => number {
  const U = (a: number, b: number): number => a + (b - a) * d.u();
  const v = (n: number): number => Math.min(cap, base * Math.pow(2, n));
  switch (strategy) {
    case 'none':
      return () => 0;
    case 'expo':
      return v;
    case 'codex':
      return (n) => v(n) * U(0.9, 1.1);
    case 'equal':
      return (n) => v(n) / 2 + U(0, v(n) / 2);
    case 'full':
      return (n) => U(0, v(n));
    case 'decorrelated': {
      let prev = base;
      return () => (prev = Math.min(cap, U(base, prev * 3)));
    }
  }
}

/** One pending message: when it arrives, a tie-breaking sequence number, and what it is. */
interface Message {
  t: number;
  seq: number;
  kind: 'read' | 'readReply' | 'write' | 'writeReply';
  client: number;
  /** read reply / write: the version read; write reply: 1 accepted, 0 rejected. */
  value: number;
}

/** A plain binary min-heap on (t, seq) — the reference's own event loop, not the kernel's queue. */
class Heap {
  private a: Message[] = [];
  get size(): number {
    return this.a.length;
  }
  private less(i: number, j: number): boolean {
    const x = this.a[i]!;
    const y = this.a[j]!;
    return x.t < y.t || (x.t === y.t && x.seq < y.seq);
  }
  private swap(i: number, j: number): void {
    [this.a[i], this.a[j]] = [this.a[j]!, this.a[i]!];
  }
  push(m: Message): void {
    this.a.push(m);
    for (let i = this.a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }
  pop(): Message {
    const top = this.a[0]!;
    const last = this.a.pop()!;
    if (this.a.length > 0) {
      this.a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.a.length && this.less(l, m)) m = l;
        if (r < this.a.length && this.less(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top;
  }
}

/**
 * SPEC §2: N clients start at t = 0; each reads the row's version (one
 * round trip), writes with it (one round trip; accepted iff the version
 * still matches, which bumps it) and on rejection sleeps backoff(n) — n the
 * number of its rejected writes so far — then reads again. Every hop is one
 * latency draw; after a rejection the hop is drawn before the backoff (the
 * AWS simulator's order, which fixes how the shared stream is consumed).
 * Returns the write calls, the time the last client finished, the events
 * (messages delivered) and every write's arrival time.
 */
function referenceHerd(clients: number, strategy: Strategy, seed: number, base = 5, cap = 2000): { calls: number; ms: number; events: number; writes: number[] } {
  const d = drawsOf(seed);
  const backoff = Array.from({ length: clients }, () => specBackoff(strategy, base, cap, d));
  const rejected = new Array<number>(clients).fill(0);
  const heap = new Heap();
  let seq = 0;
  const send = (t: number, kind: Message['kind'], client: number, value: number): void => heap.push({ t, seq: seq++, kind, client, value });
  for (let c = 0; c < clients; c++) send(d.hop(), 'read', c, 0);
  let version = 0;
  let calls = 0;
  let events = 0;
  let now = 0;
  const writes: number[] = [];
  while (heap.size > 0) {
    const m = heap.pop();
    if (m.t < now) throw new Error('reference: time went backwards');
    now = m.t;
    events++;
    switch (m.kind) {
      case 'read':
        send(now + d.hop(), 'readReply', m.client, version);
        break;
      case 'readReply':
        send(now + d.hop(), 'write', m.client, m.value);
        break;
      case 'write': {
        calls++;
        writes.push(now);
        const ok = m.value === version;
        if (ok) version++;
        send(now + d.hop(), 'writeReply', m.client, ok ? 1 : 0);
        break;
      }
      case 'writeReply':
        if (m.value === 0) {
          const hop = d.hop();
          send(now + hop + backoff[m.client]!(++rejected[m.client]!), 'read', m.client, 0);
        }
        break;
    }
  }
  return { calls, ms: now, events, writes };
}

describe('herd model against an independent reference written from SPEC §1–2', () => {
  // The two compute U[0.9, 1.1) and friends with different (equally
  // correct) float expressions, so times agree to rounding, not to the bit;
  // calls, events and every write's 1 ms bin must agree exactly.
  const agree = async (clients: number, strategy: Strategy, seed: number, base?: number, cap?: number): Promise<void> => {
    const ref = referenceHerd(clients, strategy, seed, base, cap);
    const hist = new WriteHistogram();
    const got = await runHerd({ clients, strategy, ...(base !== undefined ? { baseMs: base } : {}), ...(cap !== undefined ? { capMs: cap } : {}) }, seed, hist);
    const where = `${strategy}, ${clients} clients, seed ${seed}`;
    expect(got.calls, where).toBe(ref.calls);
    expect(got.events, where).toBe(ref.events);
    expect(Math.abs(got.ms - ref.ms), where).toBeLessThanOrEqual(1e-9 * ref.ms);
    const refHist = new WriteHistogram();
    for (const t of ref.writes) refHist.add(t);
    expect(Array.from(hist.toArray()), where).toEqual(Array.from(refHist.toArray()));
  };

  test.each(STRATEGIES.map((s) => [s]))('%s: same calls, completion time and write arrivals on the same stream', async (strategy) => {
    for (const clients of [1, 2, 7, 30, 100]) for (const seed of [1, 2, 3]) await agree(clients, strategy, seed);
  });

  test.each(STRATEGIES.map((s) => [s]))('%s: the same with a cap that binds (base 3 ms, cap 40 ms)', async (strategy) => {
    for (const seed of [4, 5]) await agree(40, strategy, seed, 3, 40);
  });

  test('the reference is not vacuous: its strategies differ, and backoffs actually ran', () => {
    const calls = STRATEGIES.map((s) => referenceHerd(50, s, 9).calls);
    expect(new Set(calls).size).toBe(STRATEGIES.length);
    for (const c of calls) expect(c).toBeGreaterThan(50);
  });
});
