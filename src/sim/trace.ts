import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical.js';

/** One line of a run's history: when, who, what, and optional details. */
export interface TraceEntry {
  t: number;
  actor: string;
  event: string;
  data?: Record<string, unknown>;
}

/**
 * Everything that happened in a run, in order. The hash is SHA-256 over the
 * JSON of each entry, fed incrementally so hashing a long trace
 * needs no second copy of it. Two runs are "the same run" exactly when their
 * hashes agree.
 */
export class Trace {
  readonly entries: TraceEntry[] = [];
  private readonly sha = createHash('sha256');
  private digest: string | undefined;

  constructor(
    /** When false, entries are only hashed, not kept (long campaigns). */
    readonly keep = true,
    /** A limit on kept entries; hashing continues past it. */
    readonly entriesMax = 1_000_000,
  ) {}

  add(t: number, actor: string, event: string, data?: Record<string, unknown>): void {
    if (this.digest !== undefined) throw new Error('trace is closed: add() after hash()');
    const e: TraceEntry = data === undefined ? { t, actor, event } : { t, actor, event, data };
    // Plain JSON.stringify is canonical enough here: entries are built by
    // our own code, so key insertion order is the same in every run, and
    // sorting keys on the hot path cost ~10 % of a tracker scenario.
    this.sha.update(JSON.stringify(e));
    this.sha.update('\n');
    if (this.keep && this.entries.length < this.entriesMax) this.entries.push(e);
  }

  /** Closes the trace and returns its hex SHA-256. */
  hash(): string {
    if (this.digest === undefined) this.digest = this.sha.digest('hex');
    return this.digest;
  }

  /** One human-readable line per entry: time, actor, event, details. */
  lines(): string[] {
    return this.entries.map(formatEntry);
  }
}

export function formatEntry(e: TraceEntry): string {
  const t = e.t.toFixed(3).padStart(10);
  const d = e.data === undefined ? '' : ' ' + canonicalJson(e.data);
  return `${t} ms  ${e.actor.padEnd(14)} ${e.event}${d}`;
}
