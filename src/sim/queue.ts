/**
 * The kernel's event queue: a binary min-heap totally ordered by
 * (timeMs, seq), where seq is a per-queue insertion counter, so two events at
 * the same virtual time pop in the order they were scheduled — never in an
 * order that depends on object identity or Map iteration.
 *
 * Entries live in parallel typed arrays (no object per event, no GC churn);
 * each carries a `kind` (an integer the kernel interprets) and two numeric
 * arguments. This is the kernel's hot path: the herd model pushes and pops
 * millions of events per second through it.
 */
export class EventQueue {
  private time: Float64Array;
  private seqs: Float64Array;
  private kinds: Int32Array;
  private a: Float64Array;
  private b: Float64Array;
  private n = 0;
  private nextSeq = 0;

  /** Fields of the entry returned by the last {@link pop}. */
  popTime = 0;
  popSeq = 0;
  popKind = 0;
  popA = 0;
  popB = 0;

  constructor(
    capacity = 1024,
    /** Upper bound on pending events; exceeding it throws (a limit on everything). */
    readonly sizeMax = 1 << 24,
  ) {
    this.time = new Float64Array(capacity);
    this.seqs = new Float64Array(capacity);
    this.kinds = new Int32Array(capacity);
    this.a = new Float64Array(capacity);
    this.b = new Float64Array(capacity);
  }

  get size(): number {
    return this.n;
  }

  /** Time of the earliest event; Infinity when empty. */
  peekTime(): number {
    return this.n === 0 ? Infinity : this.time[0]!;
  }

  clear(): void {
    this.n = 0;
    this.nextSeq = 0;
  }

  push(timeMs: number, kind: number, a: number, b: number): void {
    if (this.n === this.time.length) this.grow();
    const seq = this.nextSeq++;
    const time = this.time;
    const seqs = this.seqs;
    const kinds = this.kinds;
    const aa = this.a;
    const bb = this.b;
    let i = this.n++;
    // Sift up: move parents down until the new entry's slot is found.
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pt = time[p]!;
      if (pt < timeMs || (pt === timeMs && seqs[p]! < seq)) break;
      time[i] = pt;
      seqs[i] = seqs[p]!;
      kinds[i] = kinds[p]!;
      aa[i] = aa[p]!;
      bb[i] = bb[p]!;
      i = p;
    }
    time[i] = timeMs;
    seqs[i] = seq;
    kinds[i] = kind;
    aa[i] = a;
    bb[i] = b;
  }

  /** Removes the earliest entry into the pop* fields; returns false when empty. */
  pop(): boolean {
    const n = this.n;
    if (n === 0) return false;
    const time = this.time;
    const seqs = this.seqs;
    const kinds = this.kinds;
    const aa = this.a;
    const bb = this.b;
    this.popTime = time[0]!;
    this.popSeq = seqs[0]!;
    this.popKind = kinds[0]!;
    this.popA = aa[0]!;
    this.popB = bb[0]!;
    const last = n - 1;
    this.n = last;
    if (last === 0) return true;
    const lt = time[last]!;
    const ls = seqs[last]!;
    const lk = kinds[last]!;
    const la = aa[last]!;
    const lb = bb[last]!;
    let i = 0;
    // Sift down the former last entry from the root.
    for (;;) {
      let c = 2 * i + 1;
      if (c >= last) break;
      const r = c + 1;
      if (r < last) {
        const ct = time[c]!;
        const rt = time[r]!;
        if (rt < ct || (rt === ct && seqs[r]! < seqs[c]!)) c = r;
      }
      const ct = time[c]!;
      if (lt < ct || (lt === ct && ls < seqs[c]!)) break;
      time[i] = ct;
      seqs[i] = seqs[c]!;
      kinds[i] = kinds[c]!;
      aa[i] = aa[c]!;
      bb[i] = bb[c]!;
      i = c;
    }
    time[i] = lt;
    seqs[i] = ls;
    kinds[i] = lk;
    aa[i] = la;
    bb[i] = lb;
    return true;
  }

  private grow(): void {
    const cap = this.time.length * 2;
    if (this.n >= this.sizeMax) throw new RangeError(`event queue limit sizeMax=${this.sizeMax} reached`);
    const g = <T extends Float64Array | Int32Array>(src: T, mk: (n: number) => T): T => {
      const d = mk(cap);
      d.set(src);
      return d;
    };
    this.time = g(this.time, (k) => new Float64Array(k));
    this.seqs = g(this.seqs, (k) => new Float64Array(k));
    this.kinds = g(this.kinds, (k) => new Int32Array(k));
    this.a = g(this.a, (k) => new Float64Array(k));
    this.b = g(this.b, (k) => new Float64Array(k));
  }
}
