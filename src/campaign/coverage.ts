import type { FaultKind } from '../scenario/arbitraries.js';
import type { ServiceDefinition } from '../service/definition.js';
import { ANSWER_ID, ordinal, REACH, REACH_MAX, SPANS, type Reached } from '../service/reached.js';
import { isStableKeySource, type KeySource } from '../harness/keys.js';
import { textTable } from '../report/table.js';

/**
 * DESIGN invariant 9: a green says what it covered. A campaign counts, per
 * situation the fault space and the service can produce, how many runs
 * reached it; a holding verdict lists those no run reached, so "holds"
 * never hides "never tried" (a TTL no run outlived, a race no run had three
 * requests for). The run-level collection is src/service/reached.ts.
 */

/** One situation a campaign can reach: a stable id and its wording. */
export interface Situation {
  /** Stable id (`--json`, shard files): `crash@after-process`, `overlap:3`, `preempt@finish`, `service:ttl-expired`. */
  id: string;
  /** What it means, in the service's own words (its step and crash-point names). */
  what: string;
}

/** A situation and how many runs reached it. */
export interface CoverageRow extends Situation {
  runs: number;
}

/**
 * What a campaign (or a merged set of shards) reached: the runs counted and
 * one row per situation, those the fault space could produce first, in a
 * fixed order, then any other the runs reached. Plain data: it crosses
 * worker threads and shard files as is.
 */
export interface Coverage {
  /** Runs (and schedules) whose situations were counted. */
  runs: number;
  rows: CoverageRow[];
}

/** Situation counts as a scan collects them: id → runs that reached it. */
export type CoverageCounts = Record<string, number>;

/** What a campaign's fault space is, for {@link situationsOf}. */
export interface FaultSpace {
  /** The service (a built-in variant's definition or a user's). */
  def: Pick<ServiceDefinition, 'steps' | 'crashPoints' | 'situations' | 'slowStep' | 'progress'>;
  faults: readonly FaultKind[];
  keySource: KeySource;
  /**
   * A user's service: the generator puts the slow fault after any declared
   * step (a built-in variant's is fixed at its `slowStep`).
   */
  slowAtAnyStep?: boolean;
  /** A user's service: kills also land as an answer leaves (`kill.atAnswer`), not only at a step. */
  killAtAnswer?: boolean;
  /**
   * The steps are not phases in an order but a set (a hosted app's store
   * commands): a preemption is "before" a step, never "between" two.
   */
  stepsUnordered?: boolean;
  /**
   * A user's service: whether some 2xx answer named its effect's id (the
   * body's `id`, or `operation.resultId`) is a situation — id-exists judges
   * only such answers.
   */
  answerIds?: boolean;
}

/** The situation no run reaches: the recovery phase of a service that declares no `progress` (nothing counts it). */
export const RECOVERY_UNDECLARED = 'recovery:not-declared';

/** Said under a verdict whose service declares no `progress`: what "holds" then leaves out, and how to include it. */
export const PROGRESS_NOT_JUDGED = 'progress (invariant 5) was not judged: no `progress` is declared, so an operation left without success once the faults stopped (a key stuck "in progress" after a kill or a crash) is no failure; declare progress: { settleMs, leased, query, found } to judge it (docs/services.md)';

/** Counted per run but not a situation of its own: a declared step the run reached at all (`step:<label>`). */
export const STEP_REACHED = 'step:';

/**
 * Every situation a campaign over this fault space can reach: each fault
 * kind firing (at each declared step or crash point it can strike), same-key
 * overlaps of 2 and 3 requests inside the service, a preemption at each
 * declared step (another request ran between the phase before it and its
 * own), a replay answered, the recovery
 * phase's query and resubmission, the virtual time spans, and the service's
 * own declared situations.
 */
export function situationsOf(f: FaultSpace): Situation[] {
  const has = (k: FaultKind) => f.faults.includes(k);
  const steps = f.def.steps;
  const out: Situation[] = [];
  const add = (id: string, what: string) => out.push({ id, what });
  if (has('loseResponse')) add('lose-after-commit', 'an answer lost after its commit');
  if (has('loseAllAnswers')) add('answer-lost', 'an answer lost on the way back');
  if (has('crash') || has('crashTakeover')) for (const p of f.def.crashPoints ?? []) add(`crash@${p}`, `a crash at ${p}`);
  if (has('slow') || has('leaseRace')) {
    for (const s of f.slowAtAnyStep ? steps : [f.def.slowStep ?? steps[0]!]) add(`slow@${s}`, `slow processing after ${s}`);
  }
  if (has('pause')) for (const s of steps) add(`pause@${s}`, `a pause at ${s}`);
  if (has('kill')) for (const s of steps) add(`kill@${s}`, `a kill at ${s}`);
  if (has('kill') && f.killAtAnswer) add('kill@answer', 'a kill as an answer leaves (work done, never answered)');
  if (has('clockOffset')) add('clock-offset', 'instances with skewed clocks');
  if (has('instances')) add('instance:second', 'a request served by a second instance');
  if (has('tenants')) add('tenants:same-key', 'two tenants sending one raw key');
  if (has('keyReuseProbe')) add('key-reuse:probed', 'a key sent again with another body (answered)');
  if (isStableKeySource(f.keySource)) {
    add('overlap:2', '2 same-key requests inside the service at once');
    add('overlap:3', '3 same-key requests inside the service at once');
    add('replay', 'a stored answer replayed');
  }
  if (f.answerIds) add(ANSWER_ID, 'a 2xx answer naming an effect id (what id-exists judges; operation.resultId reads it)');
  steps.forEach((x, i) => add(`preempt@${x}`, i === 0 || f.stepsUnordered ? `a preemption before ${x}` : `a preemption between ${steps[i - 1]} and ${x}`));
  for (const s of f.def.situations ?? []) add(`service:${s}`, `${s} (declared by the service)`);
  if (f.def.progress !== undefined) {
    add('recovery:found', 'recovery: the query found the effect');
    add('recovery:resubmitted', 'recovery: a resubmission after the faults stopped');
  } else {
    // Never reached by any run: without `progress` there is no recovery phase, and a service that leaves a key
    // "in progress" for ever after a kill held with "every situation of its fault space was reached".
    add(RECOVERY_UNDECLARED, 'recovery after the faults stopped (no `progress` declared)');
  }
  const spanText: Record<string, string> = { 'span:1s': 'a run of ≤ 1 s (virtual)', 'span:1min': 'a run of 1 s – 1 min (virtual)', 'span:1h': 'a run of 1 min – 1 h (virtual)' };
  for (const s of SPANS) add(s.id, spanText[s.id]!);
  return out;
}

/**
 * The faults at a later reach of their step, for every step some run's
 * request reached more than once (`step:kv.set#2`): a row each, right
 * after the fault's first-reach row. A hosted app sends one command
 * several times per request (the claim's `SET`, the effect's, the stored
 * answer's), and a fault at the second does what one at the first cannot
 * (the answer lost after the effect). Counted together in one row, a
 * campaign that struck only first reaches said "every situation of its
 * fault space was reached" — and held on an app that caches its answer
 * before writing the order, whose one failing fault is the second `SET`'s
 * answer lost.
 */
export function withLaterReaches(situations: readonly Situation[], counts: CoverageCounts): Situation[] {
  const out: Situation[] = [];
  for (const s of situations) {
    out.push(s);
    // Not kills: a kill's `nth` counts the step's reaches on its instance, not in one request.
    const at = /^(?:crash|pause|slow)@(.+)$/.exec(s.id)?.[1];
    if (at === undefined) continue;
    for (let n = 2; n <= REACH_MAX; n++) {
      if ((counts[`${STEP_REACHED}${at}${REACH}${n}`] ?? 0) > 0) out.push({ id: `${s.id}${REACH}${n}`, what: `${s.what}, at its ${ordinal(n)} reach in a request` });
    }
  }
  return out;
}

/** Counts one run's situations. */
export function countRun(counts: CoverageCounts, r: Reached): void {
  for (const id of r.ids) counts[id] = (counts[id] ?? 0) + 1;
}

/** Adds `b`'s counts to `a` (threads, shards, the bounded and the random part of a claim). */
export function addCounts(a: CoverageCounts, b: CoverageCounts | undefined): CoverageCounts {
  if (b !== undefined) for (const [k, v] of Object.entries(b)) a[k] = (a[k] ?? 0) + v;
  return a;
}

/** The table: the fault space's situations in order (0 where never reached), then anything else reached. */
export function coverageOf(situations: readonly Situation[], counts: CoverageCounts, runs: number): Coverage {
  const known = new Set(situations.map((s) => s.id));
  const rows: CoverageRow[] = situations.map((s) => ({ ...s, runs: counts[s.id] ?? 0 }));
  // ANSWER_ID is counted on every service run, and a situation only of the campaigns that list it (users' services: a built-in's answers always name their report).
  for (const id of Object.keys(counts).filter((k) => !known.has(k) && !k.startsWith(STEP_REACHED) && k !== ANSWER_ID).sort()) rows.push({ id, what: wordingOf(id), runs: counts[id]! });
  return { runs, rows };
}

/** Sums two tables of one claim (e.g. the bounded-exhaustive and the random part). */
export function mergeCoverage(a: Coverage | undefined, b: Coverage | undefined): Coverage | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  const counts = addCounts(addCounts({}, Object.fromEntries(a.rows.map((r) => [r.id, r.runs]))), Object.fromEntries(b.rows.map((r) => [r.id, r.runs])));
  // Each table is the fault space's order with some rows left out (a hosted
  // app's commands one shard never sent): a row only b has goes right after
  // the row b has before it, so the merge keeps the unsharded order.
  const order: Situation[] = [...a.rows];
  const at = new Map(order.map((r, i) => [r.id, i]));
  let after = -1;
  for (const r of b.rows) {
    const i = at.get(r.id);
    if (i !== undefined) {
      after = i;
      continue;
    }
    order.splice(after + 1, 0, r);
    after += 1;
    at.clear();
    order.forEach((x, j) => at.set(x.id, j));
  }
  return { runs: a.runs + b.runs, rows: order.map((r) => ({ id: r.id, what: r.what, runs: counts[r.id] ?? 0 })) };
}

/** The situations no run reached. */
export function neverReached(c: Coverage): CoverageRow[] {
  return c.rows.filter((r) => r.runs === 0);
}

/** Wording of a reached id outside the fault space's list (e.g. a kill planned at a time, not a step). */
function wordingOf(id: string): string {
  if (id === 'kill@time') return 'a kill at a planned time';
  // Not a situation of every fault space (a service that reaches each step once per request never has it): listed only when reached.
  if (id === 'fault:later-reach') return 'a fault at a later reach of its step (2nd–4th)';
  // Not a fault retrysim injects: the service's own code ended its process (Node's crash on an unhandled rejection or an uncaught exception).
  if (id === 'process-crash') return 'a process crashed by the code it runs (an unhandled rejection or an uncaught exception)';
  const [kind, at] = id.split('@');
  const reach = at === undefined ? undefined : /^(.*)#(\d+)$/.exec(at);
  if (reach) return `${kind} at ${reach[1]}, at its ${ordinal(Number(reach[2]))} reach in a request`;
  if (at !== undefined) return `${kind} at ${at}`;
  return id;
}

/**
 * The coverage of several campaigns side by side: one row per situation,
 * one column per campaign (`·` where a situation is not in that campaign's
 * fault space). Used by `check` for its holding claims; `check --service`
 * can print its one campaign the same way.
 */
export function coverageText(columns: ReadonlyArray<{ name: string; coverage: Coverage }>): string {
  const ids: string[] = [];
  const what = new Map<string, string>();
  for (const c of columns) {
    for (const r of c.coverage.rows) {
      if (!what.has(r.id)) {
        ids.push(r.id);
        what.set(r.id, r.what);
      }
    }
  }
  const rows = ids.map((id) => [what.get(id)!, ...columns.map((c) => {
    const r = c.coverage.rows.find((x) => x.id === id);
    return r === undefined ? '·' : r.runs === 0 ? '0 ✗' : String(r.runs);
  })]);
  return textTable(['situation', ...columns.map((c) => `${c.name} (of ${c.coverage.runs})`)], rows);
}

/**
 * What a user campaign's `runs` reached, as `check --service/--app/--client`
 * print it under their table: the coverage table, then what was never
 * reached (a green says what it covered: a situation no run reached is one
 * the verdict says nothing about).
 */
export function reachedText(name: string, runs: number, coverage: Coverage): string {
  const never = neverReached(coverage);
  return [
    `what the ${runs} run(s) reached:`,
    coverageText([{ name, coverage }]),
    never.length === 0 ? 'every situation of its fault space was reached' : `never reached (the verdict says nothing about these): ${never.map((x) => x.what).join('; ')}`,
    ...(never.some((x) => x.id === RECOVERY_UNDECLARED) ? [PROGRESS_NOT_JUDGED] : []),
  ].join('\n');
}
