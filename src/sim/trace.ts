import { createHash, hash as hashOnce, type Hash } from 'node:crypto';
import { canonicalJson } from './canonical.js';

/** One line of a run's history: when, who, what, and optional details. */
export interface TraceEntry {
  t: number;
  actor: string;
  event: string;
  data?: Record<string, unknown>;
}

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

  add(t: number, actor: string, event: string, data?: Record<string, unknown>): void {
    if (this.digest !== undefined) throw new Error('trace is closed: add() after hash()');
    // Plain JSON (no key sorting) is canonical enough here: entries are
    // built by our own code, so key insertion order is the same in every run.
    const b = this.batch;
    b.push(t, actor, event, data ?? null);
    if (b.length >= 4 * BATCH_ENTRIES) this.flush();
    if (this.keep && this.entries.length < this.entriesMax) {
      this.entries.push(data === undefined ? { t, actor, event } : { t, actor, event, data });
    }
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
  note(t: number, actor: string, event: string, data?: Record<string, unknown>): void {
    if (this.digest !== undefined) throw new Error('trace is closed: add() after hash()');
    if (this.keep && this.entries.length < this.entriesMax) {
      this.entries.push(data === undefined ? { t, actor, event } : { t, actor, event, data });
    }
  }

  private flush(): void {
    (this.sha ??= createHash('sha256')).update(JSON.stringify(this.batch));
    this.batch = [];
  }

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
  return `${t} ms  ${e.actor.padEnd(14)} ${e.event}${d}`;
}
