/**
 * The kernel's event queue, totally ordered by (timeMs, seq), where seq is a
 * per-queue insertion counter: two events at the same virtual time pop in the
 * order they were scheduled — never in an order that depends on object
 * identity or Map iteration. Every key is unique, so the pop order is fixed
 * by the keys alone, whatever the internal shape.
 *
 * This is the kernel's hot path (the herd model pushes and pops millions of
 * events per second), so it is built for the common discrete-event pattern
 * "pop an event, whose handler schedules the next one":
 *
 * - **Slots and a tournament (winner) tree.** Each pending event lives in a
 *   slot that never moves (parallel typed arrays: time, seq, kind, a, b; no
 *   object per event). A complete binary tree over the slots holds, at each
 *   inner node, the slot that wins (is earliest) in its subtree; the root is
 *   the next event. Changing one slot replays exactly its leaf-to-root path:
 *   log2(capacity) comparisons, one per level — about half of what a binary
 *   heap's sift-down needs, and the branch is the only unpredictable work.
 * - **Deferred pop.** `pop()` reads the winner and leaves its slot in place.
 *   If the next operation is a `push` — the handler scheduling its follow-up
 *   — the new event reuses that slot and one path replay does the whole
 *   pop-and-push. Any other operation retires the slot first.
 * - Free slots have time = +Infinity and seq = +Infinity, so they lose every
 *   match, even against a (pathological) event scheduled at +Infinity.
 *   Free slots are reused last-in first-out, so the tree stays as small as
 *   the largest number of events ever pending at once.
 */
export class EventQueue {
  /** By slot: time, seq, kind and the two arguments. */
  private t!: Float64Array;
  private seqs!: Float64Array;
  private kinds!: Int32Array;
  private a!: Float64Array;
  private b!: Float64Array;
  /** Winner tree: node i (1 ≤ i < cap) holds its subtree's earliest slot; leaf cap + s holds s. */
  private win!: Int32Array;
  private cap!: number;
  /** Free slots below nSlots (a stack), and the slots' high-water mark. */
  private free!: Int32Array;
  private nFree = 0;
  private nSlots = 0;
  /**
   * Occupied slots, the popped-but-not-retired one included (so neither a
   * pop nor the push that reuses its slot has to touch the count: they are
   * inlined into the kernel's loop, where every byte of bytecode counts
   * against the JIT's inlining budget).
   */
  private n = 0;
  /** Slot of the last pop while it is still in the tree; -1 when none. */
  private held = -1;
  private nextSeq = 0;

  /** Fields of the entry returned by the last {@link pop}. */
  popTime = 0;
  popKind = 0;
  popA = 0;
  popB = 0;

  constructor(
    /** Initial number of slots (rounded up to a power of two); grows by doubling. */
    capacity = 16,
    /** Upper bound on pending events; exceeding it throws (a limit on everything). */
    readonly sizeMax = 1 << 24,
  ) {
    let cap = 2;
    while (cap < capacity) cap *= 2;
    this.adopt(views(cap), cap);
  }

  /** Pending events. */
  get size(): number {
    return this.held >= 0 ? this.n - 1 : this.n;
  }

  /** Seq of the entry returned by the last {@link pop}; valid until the next push. */
  get popSeq(): number {
    return this.held >= 0 ? this.seqs[this.held]! : NaN;
  }

  /** Time of the earliest event; Infinity when empty. */
  peekTime(): number {
    if (this.held >= 0) this.retire();
    return this.n === 0 ? Infinity : this.t[this.win[1]!]!;
  }

  clear(): void {
    this.t.fill(Infinity);
    this.seqs.fill(Infinity);
    this.n = 0;
    this.held = -1;
    this.nextSeq = 0;
    this.nFree = 0;
    this.nSlots = 0;
    this.rebuild();
  }

  push(timeMs: number, kind: number, a: number, b: number): void {
    // Kept small so the JIT inlines it into handlers (a non-inlined call
    // boxes the double argument: one allocation per event).
    let s = this.held;
    if (s >= 0) this.held = -1; // reuse the popped slot: one replay for pop + push
    else s = this.allocSlot();
    const seq = this.nextSeq++;
    this.t[s] = timeMs;
    this.seqs[s] = seq;
    this.kinds[s] = kind;
    this.a[s] = a;
    this.b[s] = b;
    this.replay(s);
  }

  private allocSlot(): number {
    if (this.n >= this.sizeMax) throw new RangeError(`event queue limit sizeMax=${this.sizeMax} reached`);
    this.n++;
    if (this.nFree > 0) return this.free[--this.nFree]!;
    if (this.nSlots === this.cap) this.grow();
    return this.nSlots++;
  }

  /** Removes the earliest entry into the pop* fields; returns false when empty. */
  pop(): boolean {
    if (this.held >= 0) this.retire();
    if (this.n === 0) return false;
    const s = this.win[1]!;
    this.popTime = this.t[s]!;
    this.popKind = this.kinds[s]!;
    this.popA = this.a[s]!;
    this.popB = this.b[s]!;
    this.held = s;
    return true;
  }

  /** Frees the slot of the last pop (no push reused it). */
  private retire(): void {
    const s = this.held;
    this.held = -1;
    this.n--;
    this.t[s] = Infinity;
    this.seqs[s] = Infinity;
    this.free[this.nFree++] = s;
    this.replay(s);
  }

  /**
   * Slot s changed: recompute the winners on its path to the root. The
   * match result at each level is data-dependent and unpredictable (about
   * half the matches go either way), so the winner is selected with integer
   * arithmetic instead of a branch; only the rare tie on time takes a branch
   * (to the seq comparison). This about halves the cost of a replay.
   */
  private replay(s: number): void {
    const win = this.win;
    const t = this.t;
    const seqs = this.seqs;
    let cur = s;
    let node = this.cap + s;
    while (node > 1) {
      const o = win[node ^ 1]!;
      const ot = t[o]!;
      const ct = t[cur]!;
      let lt = +(ot < ct); // 1 when the sibling's winner is earlier
      if (ot === ct) lt = +(seqs[o]! < seqs[cur]!);
      cur ^= (cur ^ o) & -lt;
      node >>= 1;
      win[node] = cur;
    }
  }

  private rebuild(): void {
    const cap = this.cap;
    const win = this.win;
    const t = this.t;
    const seqs = this.seqs;
    for (let s = 0; s < cap; s++) win[cap + s] = s;
    for (let i = cap - 1; i >= 1; i--) {
      const l = win[2 * i]!;
      const r = win[2 * i + 1]!;
      const lt = t[l]!;
      const rt = t[r]!;
      win[i] = rt < lt || (rt === lt && seqs[r]! < seqs[l]!) ? r : l;
    }
  }

  private grow(): void {
    const cap = this.cap * 2;
    const f = views(cap);
    f.t.set(this.t);
    f.seqs.set(this.seqs);
    f.kinds.set(this.kinds);
    f.a.set(this.a);
    f.b.set(this.b);
    f.free.set(this.free);
    this.adopt(f, cap);
  }

  /** Switches to the arrays `f` of `cap` slots and rebuilds the tree over them. */
  private adopt(f: ReturnType<typeof views>, cap: number): void {
    this.t = f.t;
    this.seqs = f.seqs;
    this.kinds = f.kinds;
    this.a = f.a;
    this.b = f.b;
    this.free = f.free;
    this.win = f.win;
    this.cap = cap;
    this.rebuild();
  }
}

/**
 * The arrays of a queue with `cap` slots, as views on one ArrayBuffer: one
 * backing-store allocation per size instead of seven (the herd makes a
 * kernel per run, thousands per second, and separate buffers showed up as
 * allocation and GC time). Free slots' time and seq are +Infinity.
 */
function views(cap: number) {
  const buf = new ArrayBuffer(cap * (4 * 8 + 2 * 4) + 2 * cap * 4);
  const f64 = (i: number): Float64Array => new Float64Array(buf, i * cap * 8, cap);
  const i32 = (i: number, n: number): Int32Array => new Int32Array(buf, 4 * cap * 8 + i * cap * 4, n);
  const t = f64(0).fill(Infinity);
  const seqs = f64(1).fill(Infinity);
  return { t, seqs, a: f64(2), b: f64(3), kinds: i32(0, cap), free: i32(1, cap), win: i32(2, 2 * cap) };
}
