/**
 * A calendar (bucket) queue with the same interface and the same total order
 * as {@link EventQueue}: events pop by (timeMs, seq), seq being the insertion
 * counter, so ties pop in scheduling order. It suits models whose pending
 * events sit in a window of bounded width ahead of the clock — the herd,
 * where every client has exactly one event pending, due within a hop (about
 * 10 ms) or a capped backoff (2 s) — and there costs O(1) per operation
 * instead of the tournament tree's log2(n) levels.
 *
 * - Time is cut into buckets of `bucketMs`; event time t belongs to bucket
 *   k = floor(t / bucketMs) (computed as floor(t · (1 / bucketMs)), which is
 *   monotone in t, so bucket order never contradicts time order). A ring of
 *   `buckets` buckets holds the events with k in [cur, cur + buckets), where
 *   cur is the bucket of the last pop; each bucket is a linked list of slots
 *   sorted by (time, seq), and a bitmap of non-empty buckets lets the pop
 *   skip empty stretches 32 buckets per step.
 * - Events beyond the ring's horizon wait in an unsorted overflow list and
 *   move into the ring when it reaches them (before any later event can
 *   pop), so any time is allowed, +Infinity included; a push before cur
 *   (never from the kernel, which refuses the past) rebuilds the ring.
 *
 * Slots are parallel typed arrays (no object per event) reused last-in
 * first-out, so the event a handler schedules usually takes the slot just
 * popped. A queue that ends empty needs no clearing, so one queue can serve
 * many short runs (see KernelOptions.queue).
 */
export class CalendarQueue {
  /** By slot: time, seq, kind, the two arguments, and the next slot in its bucket (-1: none). */
  private t: Float64Array;
  private seqs: Float64Array;
  private kinds: Int32Array;
  private a: Float64Array;
  private b: Float64Array;
  private next: Int32Array;
  /** Free slots below nSlots (a stack), and the slots' high-water mark. */
  private free: Int32Array;
  private nFree = 0;
  private nSlots = 0;
  private cap: number;
  /** By ring position: first slot of the bucket (-1: empty); bit per position: non-empty. */
  private readonly head: Int32Array;
  private readonly bits: Int32Array;
  private readonly invW: number;
  private readonly nb: number;
  private readonly mask: number;
  /** Absolute bucket number of the ring's start (the last pop's bucket). */
  private cur = 0;
  /** Pending events, all of them; those in the ring. */
  private n = 0;
  private ringN = 0;
  /** Overflow list (events at k >= cur + nb), its length and its earliest time. */
  private ovHead = -1;
  private ovN = 0;
  private ovMinT = Infinity;
  private nextSeq = 0;
  private last = -1;

  /** Fields of the entry returned by the last {@link pop}. */
  popTime = 0;
  popKind = 0;
  popA = 0;
  popB = 0;

  constructor(
    /** Bucket width, ms (> 0). About the mean gap between pending events is a good choice. */
    readonly bucketMs: number,
    /** Buckets in the ring (a power of two >= 32); bucketMs × buckets should cover how far ahead events are scheduled. */
    readonly buckets: number,
    /** Initial number of slots; grows by doubling. */
    capacity = 16,
    /** Upper bound on pending events; exceeding it throws (a limit on everything). */
    readonly sizeMax = 1 << 24,
  ) {
    if (!(bucketMs > 0 && Number.isFinite(1 / bucketMs))) throw new RangeError(`calendar queue: bucketMs must be > 0, got ${bucketMs}`);
    if (!(Number.isInteger(buckets) && buckets >= 32 && buckets <= 1 << 24 && (buckets & (buckets - 1)) === 0)) {
      throw new RangeError(`calendar queue: buckets must be a power of two in [32, 2^24], got ${buckets}`);
    }
    this.invW = 1 / bucketMs;
    this.nb = buckets;
    this.mask = buckets - 1;
    this.head = new Int32Array(buckets).fill(-1);
    this.bits = new Int32Array(buckets >> 5);
    let cap = 2;
    while (cap < capacity) cap *= 2;
    this.cap = cap;
    this.t = new Float64Array(cap);
    this.seqs = new Float64Array(cap);
    this.kinds = new Int32Array(cap);
    this.a = new Float64Array(cap);
    this.b = new Float64Array(cap);
    this.next = new Int32Array(cap);
    this.free = new Int32Array(cap);
  }

  /** Pending events. */
  get size(): number {
    return this.n;
  }

  /** Seq of the entry returned by the last {@link pop}; valid until the next push. */
  get popSeq(): number {
    return this.last >= 0 ? this.seqs[this.last]! : NaN;
  }

  /** Time of the earliest event; Infinity when empty. */
  peekTime(): number {
    if (this.ringN === 0) return this.ovMinT; // Infinity when the overflow is empty too
    return this.t[this.head[this.firstPos()]!]!;
  }

  /** Empties the queue and restarts seq and the ring at 0. Cheap when already empty. */
  clear(): void {
    if (this.n > 0) {
      this.head.fill(-1);
      this.bits.fill(0);
    }
    this.n = 0;
    this.ringN = 0;
    this.ovHead = -1;
    this.ovN = 0;
    this.ovMinT = Infinity;
    this.cur = 0;
    this.nextSeq = 0;
    this.nFree = 0;
    this.nSlots = 0;
    this.last = -1;
  }

  push(timeMs: number, kind: number, a: number, b: number): void {
    // Kept small so the JIT inlines it into handlers (a non-inlined call
    // boxes the double argument); the rare cases are out of line.
    const s = this.nFree > 0 ? this.free[--this.nFree]! : this.newSlot();
    this.n++;
    const t = this.t;
    t[s] = timeMs;
    this.seqs[s] = this.nextSeq++;
    this.kinds[s] = kind;
    this.a[s] = a;
    this.b[s] = b;
    const k = Math.floor(timeMs * this.invW);
    const d = k - this.cur;
    if (d >= 0 && d < this.nb) {
      // Into the ring. The new seq is the largest yet, so it goes after
      // every entry of its bucket with time <= timeMs.
      const p = k & this.mask;
      const x = this.head[p]!;
      if (x < 0 || t[x]! > timeMs) {
        this.next[s] = x;
        this.head[p] = s;
        this.bits[p >> 5]! |= 1 << p;
      } else this.insertAfter(x, s);
      this.ringN++;
    } else this.pushFar(s);
  }

  /** Removes the earliest entry into the pop* fields; returns false when empty. */
  pop(): boolean {
    if (this.ringN === 0 && !this.refill()) return false;
    const mask = this.mask;
    const pos = this.cur & mask;
    const bits = this.bits;
    let w = pos >> 5;
    let m = bits[w]! & (-1 << pos);
    if (m === 0) {
      w = this.scan(w);
      m = bits[w]!;
    }
    const bit = m & -m;
    const p = (w << 5) | (31 - Math.clz32(bit));
    if (p !== pos) {
      this.cur += (p - pos) & mask;
      if (this.ovN !== 0) this.migrate();
    }
    const s = this.head[p]!;
    const nx = this.next[s]!;
    this.head[p] = nx;
    if (nx < 0) bits[w] = bits[w]! ^ bit;
    this.ringN--;
    this.n--;
    this.popTime = this.t[s]!;
    this.popKind = this.kinds[s]!;
    this.popA = this.a[s]!;
    this.popB = this.b[s]!;
    this.free[this.nFree++] = s;
    this.last = s;
    return true;
  }

  // ------------------------------------------------------------ rare paths

  /** Ring position of the earliest bucket (the ring must not be empty). */
  private firstPos(): number {
    const pos = this.cur & this.mask;
    let w = pos >> 5;
    let m = this.bits[w]! & (-1 << pos);
    if (m === 0) {
      w = this.scan(w);
      m = this.bits[w]!;
    }
    return (w << 5) | (31 - Math.clz32(m & -m));
  }

  /** The first non-zero bitmap word after word w, wrapping (the ring must not be empty). */
  private scan(w: number): number {
    const bits = this.bits;
    const wm = (this.nb >> 5) - 1;
    do w = (w + 1) & wm;
    while (bits[w] === 0);
    return w;
  }

  /** Links s after x (same bucket, t[x] <= t[s], s the newest) past every entry not later than s. */
  private insertAfter(x: number, s: number): void {
    const t = this.t;
    const next = this.next;
    const ts = t[s]!;
    for (let y = next[x]!; y >= 0 && t[y]! <= ts; y = next[y]!) x = y;
    next[s] = next[x]!;
    next[x] = s;
  }

  /** Inserts slot s into ring bucket k by (time, seq) — for events older than the newest. */
  private insertRing(s: number, k: number): void {
    const t = this.t;
    const seqs = this.seqs;
    const next = this.next;
    const p = k & this.mask;
    const ts = t[s]!;
    const qs = seqs[s]!;
    let prev = -1;
    let x = this.head[p]!;
    while (x >= 0 && (t[x]! < ts || (t[x] === ts && seqs[x]! < qs))) {
      prev = x;
      x = next[x]!;
    }
    next[s] = x;
    if (prev < 0) this.head[p] = s;
    else next[prev] = s;
    this.bits[p >> 5]! |= 1 << p;
    this.ringN++;
  }

  /** Bucket of time t, clamped so that cur + nb stays an exact integer (+Infinity lands in the last bucket). */
  private bucketOf(t: number): number {
    const k = Math.floor(t * this.invW);
    return k < 2 ** 50 ? k : 2 ** 50;
  }

  /** A push outside the ring: beyond its horizon (overflow) or before cur (rebuild). */
  private pushFar(s: number): void {
    const k = this.bucketOf(this.t[s]!);
    if (k < this.cur) {
      this.rewind(k);
      this.insertRing(s, k);
    } else if (k - this.cur < this.nb) this.insertRing(s, k);
    else this.toOverflow(s);
  }

  private toOverflow(s: number): void {
    this.next[s] = this.ovHead;
    this.ovHead = s;
    this.ovN++;
    const ts = this.t[s]!;
    if (ts < this.ovMinT) this.ovMinT = ts;
  }

  /** Moves overflow events that the ring now reaches into it. */
  private migrate(): void {
    const end = this.cur + this.nb;
    if (this.bucketOf(this.ovMinT) >= end) return;
    let x = this.ovHead;
    this.ovHead = -1;
    this.ovN = 0;
    this.ovMinT = Infinity;
    while (x >= 0) {
      const nx = this.next[x]!;
      const k = this.bucketOf(this.t[x]!);
      if (k < end) this.insertRing(x, k);
      else this.toOverflow(x);
      x = nx;
    }
  }

  /** The ring is empty: restart it at the overflow's earliest bucket. False when the queue is empty. */
  private refill(): boolean {
    if (this.ovN === 0) return false;
    this.cur = this.bucketOf(this.ovMinT);
    this.migrate();
    return true;
  }

  /** Restarts the ring at bucket k < cur: every ring event is re-placed (ring or overflow). */
  private rewind(k: number): void {
    const held: number[] = [];
    const head = this.head;
    for (let p = 0; p < this.nb; p++) {
      for (let x = head[p]!; x >= 0; x = this.next[x]!) held.push(x);
      head[p] = -1;
    }
    this.bits.fill(0);
    this.ringN = 0;
    this.cur = k;
    for (const x of held) {
      const kx = this.bucketOf(this.t[x]!);
      if (kx - k < this.nb) this.insertRing(x, kx);
      else this.toOverflow(x);
    }
  }

  private newSlot(): number {
    if (this.nSlots >= this.sizeMax) throw new RangeError(`event queue limit sizeMax=${this.sizeMax} reached`);
    if (this.nSlots === this.cap) this.grow();
    return this.nSlots++;
  }

  private grow(): void {
    const cap = this.cap * 2;
    const f64 = (x: Float64Array): Float64Array => {
      const y = new Float64Array(cap);
      y.set(x);
      return y;
    };
    const i32 = (x: Int32Array): Int32Array => {
      const y = new Int32Array(cap);
      y.set(x);
      return y;
    };
    this.t = f64(this.t);
    this.seqs = f64(this.seqs);
    this.a = f64(this.a);
    this.b = f64(this.b);
    this.kinds = i32(this.kinds);
    this.next = i32(this.next);
    this.free = i32(this.free);
    this.cap = cap;
  }
}
