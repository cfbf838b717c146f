import { createHash, hash as hashOnce, type Hash } from 'node:crypto';
import { canonicalJson } from './canonical.js';

/** One line of a run's history: when, who, what, and optional details. */
export interface TraceEntry {
  t: number;
  actor: string;
  event: string;
  data?: Record<string, unknown>;
  /**
   * Words shown after the event, never hashed: what the line says beyond
   * the run's identity, known only once the step has run (a store
   * command's key, arguments and answer: `kv.set order:k1 … → OK`). Set by
   * {@link Trace.detail}; the entry hashed is `[t, actor, event, data]` as
   * ever, so no recorded run's hash changes.
   */
  detail?: string;
}

/** How far back {@link Trace.detail} looks for the line it adds words to. */
const DETAIL_LOOKBACK = 256;

/** Entries are encoded and hashed in batches of this many. */
const BATCH_ENTRIES = 1024;

/**
 * Everything that happened in a run, in order. The hash is SHA-256 over the
 * entries encoded as JSON arrays of `[t, actor, event, data]` quadruples
 * (`data` null when absent), one array per batch of {@link BATCH_ENTRIES}
 * entries, the batches' text concatenated. Batching is for speed: one native
 * hash update and one JSON encoding per entry cost more than the rest of
 * tracing together, so a short run is encoded and hashed in one go at the
 * end. Entries are therefore encoded lazily: `data` must not be mutated
 * after {@link Trace.add}. Two runs are "the same run" exactly when their
 * hashes agree.
 */
export class Trace {
  readonly entries: TraceEntry[] = [];
  /** The current batch, flattened: t, actor, event, data, t, actor, ... */
  private batch: unknown[] = [];
  private sha: Hash | undefined;
  private digest: string | undefined;

  constructor(
    /** When false, entries are only hashed, not kept (long campaigns). */
    readonly keep = true,
    /** A limit on kept entries; hashing continues past it. */
    readonly entriesMax = 1_000_000,
  ) {}

  /** Adds an entry; returns the entry kept for display (undefined when none is kept), which {@link detail} may add words to. */
  add(t: number, actor: string, event: string, data?: Record<string, unknown>): TraceEntry | undefined {
    if (this.digest !== undefined) throw new Error('trace is closed: add() after hash()');
    // Plain JSON (no key sorting) is canonical enough here: entries are
    // built by our own code, so key insertion order is the same in every run.
    const b = this.batch;
    b.push(t, actor, event, data ?? null);
    if (b.length >= 4 * BATCH_ENTRIES) this.flush();
    return this.kept(t, actor, event, data);
  }

  private kept(t: number, actor: string, event: string, data?: Record<string, unknown>): TraceEntry | undefined {
    if (!this.keep || this.entries.length >= this.entriesMax) return undefined;
    const e: TraceEntry = data === undefined ? { t, actor, event } : { t, actor, event, data };
    this.entries.push(e);
    return e;
  }

  /**
   * Says what a step did once it ran at time `t`: `call` (a store command's
   * keys and arguments) and its `answer`, on the last kept line of `actor`
   * whose event is `event` and that has no words yet. When nothing was
   * shown since that line and no time passed, the line gets both
   * (`kv.set order:k1 NX PX 30000 → OK`); otherwise (a pause or slow fault
   * held the step) it gets the call, and a line of its own at `t` says
   * `event call → answer`, where it happened. Display only: nothing is
   * hashed, so no run's hash changes. Nothing when no trace is kept.
   */
  detail(t: number, actor: string, event: string, call: string, answer: string): void {
    if (!this.keep) return;
    const stop = Math.max(0, this.entries.length - DETAIL_LOOKBACK);
    for (let i = this.entries.length - 1; i >= stop; i--) {
      const e = this.entries[i]!;
      if (e.actor !== actor || e.event !== event || e.detail !== undefined) continue;
      const words = `${call} → ${answer}`;
      if (i === this.entries.length - 1 && e.t === t) {
        e.detail = words;
        return;
      }
      e.detail = call;
      break;
    }
    this.note(t, actor, `${event} ${call} → ${answer}`);
  }

  /**
   * Hashes an entry without keeping it for display: every field of every
   * message (headers, keys, bodies) belongs to the run's identity, but
   * printing each request in full would drown the timeline.
   */
  addHashed(t: number, actor: string, event: string, data?: Record<string, unknown>): void {
    if (this.digest !== undefined) throw new Error('trace is closed: add() after hash()');
    const b = this.batch;
    // Hashed as add() hashes it: an entry without data is the same entry either way.
    b.push(t, actor, event, data ?? null);
    if (b.length >= 4 * BATCH_ENTRIES) this.flush();
  }

  /**
   * Shows an entry without hashing it: a line that says in words what the
   * hashed entries already imply (a fault's pause is in the scenario and in
   * the times of what follows), so adding it leaves every run's identity —
   * and every recorded hash — as it was.
   */
  note(t: number, actor: string, event: string, data?: Record<string, unknown>): TraceEntry | undefined {
    if (this.digest !== undefined) throw new Error('trace is closed: add() after hash()');
    return this.kept(t, actor, event, data);
  }

  private flush(): void {
    (this.sha ??= createHash('sha256')).update(JSON.stringify(this.batch));
    this.batch = [];
  }

  /**
   * The kernel resumes a task: what happens from here until the next
   * switch is that task's doing. Nothing here (an empty call per switch);
   * an observed trace (src/scenario/observe.ts) reads the database then.
   */
  switched(_t: number, _task: string): void {}

  /** Closes the trace and returns its hex SHA-256. */
  hash(): string {
    if (this.digest === undefined) {
      // A short run was never flushed: one-shot hashing skips the Hash object.
      const text = JSON.stringify(this.batch);
      this.batch = [];
      if (this.sha === undefined) this.digest = hashOnce('sha256', text, 'hex');
      else this.digest = this.sha.update(text).digest('hex');
    }
    return this.digest;
  }

  /** One human-readable line per entry: time, actor, event, details. */
  lines(): string[] {
    return this.entries.map(formatEntry);
  }
}

/** One trace entry as a line: time, actor, event, details. */
export function formatEntry(e: TraceEntry): string {
  const t = e.t.toFixed(3).padStart(10);
  const d = e.data === undefined ? '' : ' ' + canonicalJson(e.data);
  return `${t} ms  ${e.actor.padEnd(14)} ${e.event}${e.detail === undefined ? '' : ` ${e.detail}`}${d}`;
}
