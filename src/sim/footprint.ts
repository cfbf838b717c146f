/**
 * What a task's next step may touch, declared where the task parks (the
 * kernel's `yield`, `sleep`, future waits, `spawn`). Partial-order reduction
 * (`exploreAll` with `reduce: true`) treats two steps as independent — so
 * that running them in either order reaches the same state, and only one
 * order needs exploring — only when their footprints do not conflict.
 *
 * Independence is declared, never guessed: a park that declares nothing
 * gets {@link TOUCHES_ALL} (`undefined`), which conflicts with every step,
 * so an unannotated model is explored in full. A declaration must cover
 * everything the step can read or write that another task's step can also
 * reach — shared rows, counters, random streams, anything whose order
 * matters — for *every* state in which the step may run.
 */
export interface Footprint {
  /** Resources the step may read, e.g. `db:key:<scopedKey>`. */
  readonly reads?: readonly string[];
  /** Resources the step may write (a write also counts as a read). */
  readonly writes?: readonly string[];
}

/** A step that conflicts with every other step: the default of an undeclared park. */
export const TOUCHES_ALL: Footprint | undefined = undefined;

/** A step that touches nothing another task can see (e.g. only its own locals, or a sleep). */
export const TOUCHES_NOTHING: Footprint = Object.freeze({});

const NONE: readonly string[] = [];

/** Whether two steps with these footprints may fail to commute (undefined conflicts with everything). */
export function conflicts(a: Footprint | undefined, b: Footprint | undefined): boolean {
  if (a === undefined || b === undefined) return true;
  const aw = a.writes ?? NONE;
  const bw = b.writes ?? NONE;
  if (aw.length === 0 && bw.length === 0) return false;
  const ar = a.reads ?? NONE;
  const br = b.reads ?? NONE;
  for (const w of aw) if (bw.includes(w) || br.includes(w)) return true;
  for (const w of bw) if (ar.includes(w)) return true;
  return false;
}

/** The union of footprints (undefined, i.e. everything, absorbs the rest). */
export function union(...fps: Array<Footprint | undefined>): Footprint | undefined {
  const reads: string[] = [];
  const writes: string[] = [];
  for (const f of fps) {
    if (f === undefined) return undefined;
    if (f.reads) reads.push(...f.reads);
    if (f.writes) writes.push(...f.writes);
  }
  return { reads, writes };
}
