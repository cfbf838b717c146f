import type { Footprint } from '../sim/footprint.js';

/**
 * Resource names for the footprints the write strategies declare at their
 * steps (see `Footprint` in src/sim/footprint.ts). Two steps conflict when
 * one writes what the other reads or writes.
 */

/** The reports table: every insert conflicts with every other, since ids are allocated in insertion order. */
export const REPORTS = 'db:reports';

/** One row of `idempotency_keys`. */
export function keyRow(scopedKey: string): string {
  return `db:key:${scopedKey}`;
}

/** A step that reads these resources. */
export function reads(...resources: string[]): Footprint {
  return { reads: resources };
}

/** A step that writes (and may read) these resources. */
export function writes(...resources: string[]): Footprint {
  return { writes: resources };
}
