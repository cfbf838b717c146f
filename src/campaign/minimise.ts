import type { Scenario } from '../scenario/schema.js';
import { parseScenario, ScenarioError } from '../scenario/load.js';
import { runScenario, type ScenarioRun } from '../scenario/run.js';
import { ListChoice } from '../sim/choice/list.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import { searchBounded, type BoundedHit } from '../sim/explore/bounded.js';

/** Options of {@link minimiseCounterexample}. */
/**
 * The case given to {@link minimiseCounterexample} did not fail when run
 * again. With retrysim's own models that is a bug; with a user's code it
 * says the code depends on more than the run (state kept from one simulated
 * run to the next), which the callers name in one line.
 */
export class CaseDoesNotFailError extends Error {
  override name = 'CaseDoesNotFailError';
}

export interface MinimiseOptions<R extends MinimisableRun = ScenarioRun> {
  /** The failure to keep: true when a run still shows it. */
  isHit: (run: R) => boolean;
  /** Runs allowed for one schedule search (one scenario). Default 1,000. */
  searchRunsMax?: number;
  /** Runs allowed in all. Default 6,000. */
  runsMax?: number;
  /** Runs of the schedule in hand on candidates no search decided, in all (they may run after `runsMax` is spent). Default 500. */
  transferRunsMax?: number;
  /**
   * Runs kept back for the scenario the simplification ends at, in all:
   * its one-step simplifications that the spent budget left undecided are
   * searched once more (each up to `searchRunsMax`), so the last, smallest
   * scenario — the cheapest to search — is not the one left unjudged.
   * Default 2,000.
   */
  finalRunsMax?: number;
  /** Runs one scenario on a choice source (default {@link runScenario}; a user service's campaign passes its definition). */
  run?: (s: Scenario, choices: ChoiceSource) => Promise<R>;
  /**
   * The operations are run by a user's retry client, not the built-in
   * harness: the harness's knobs (attempts, model resubmits, the key-reuse
   * probe) change nothing, so they are not simplifications to try.
   */
  userClient?: boolean;
  /**
   * The service's declared steps: where a pair of steps may move a kill
   * that strikes at a step ({@link pairsOf}). Without them a kill stays
   * where it was found.
   */
  steps?: readonly string[];
  /**
   * A limit on the pass besides its run counts: once `expired()` says so
   * (asked before every run; once true, taken as true for good) no further
   * run is made — the counterexample in hand is the answer, and
   * {@link Minimised.stopped} says it is not known to be minimal. The
   * caller owns the clock: a wall-clock budget is read by the CLI, never by
   * the simulated code (DESIGN invariant 1). `what` names the limit in the
   * note, e.g. `shrink budget 60 s`.
   */
  timeLimit?: { expired: () => boolean; what: string };
}

/**
 * A {@link MinimiseOptions.timeLimit} of `budgetMs` from now on `clockMs`:
 * the shrink budget of `check --service/--app/--client`, started at the
 * first failure so fast-check's shrinking and the minimiser share it. The
 * clock is the caller's (the CLI reads the machine's; tests pass one that
 * jumps), and it is read only between runs.
 */
export function shrinkTimeLimit(clockMs: () => number, budgetMs: number): NonNullable<MinimiseOptions['timeLimit']> {
  const atMs = clockMs() + budgetMs;
  return { expired: () => clockMs() >= atMs, what: `shrink budget ${durationText(budgetMs)}` };
}

/** A duration as a person reads it: `500 ms`, `60 s`, `1.5 s`, `10 min`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Number((ms / 1000).toFixed(3))} s`;
}

/** What the minimiser needs of a run: the schedule it took. */
export interface MinimisableRun {
  result: ScenarioRun['result'];
}

/** A counterexample after {@link minimiseCounterexample}. */
export interface Minimised {
  scenario: Scenario;
  /** The schedule as a choice list (replay with `ListChoice`). */
  choices: number[];
  preemptions: number;
  /** Non-default choices in the schedule. */
  decisions: number;
  /**
   * True only when every schedule of the final scenario with fewer
   * preemptions was run, none failed and none threw: then `preemptions` is
   * minimal for it.
   */
  preemptionsMinimal: boolean;
  /** What the pass removed, in order, e.g. `operation op2`, `crashMidRequest 2 → 1`; and `renumbered op2 → op1` when the operations left were renamed op1..opN (see renumbered). */
  removed: string[];
  /** One-step simplifications of the result whose search ran out of runs (or was never started: the budget was spent) before it could rule them out. */
  undecided: string[];
  /**
   * One-step simplifications of the result that could not be judged because
   * a run of them (or loading them) threw, each with the error: a candidate
   * that throws has not been shown to pass, so it is not counted as "does
   * not fail". Also a schedule search of the result itself that threw.
   */
  errored: string[];
  runs: number;
  /**
   * Present only when {@link MinimiseOptions.timeLimit} stopped the pass:
   * the limit's name, and the one-step simplifications of the result that
   * were not tried because of it (the pairs are not listed).
   */
  stopped?: { by: string; untried: string[] };
}

/**
 * Whether a minimised counterexample is shown minimal, and if not, each
 * dimension that is not, in words: the preemption count when its schedule
 * search was cut short, every one-step simplification not ruled out.
 */
export function notShownMinimal(m: Pick<Minimised, 'preemptions' | 'preemptionsMinimal' | 'undecided' | 'errored' | 'stopped'>): string[] {
  return [
    ...(m.stopped ? [`shrinking stopped at its time limit (${m.stopped.by}): not known to be minimal`] : []),
    ...(m.preemptionsMinimal ? [] : [`preemptions ${m.preemptions}: not every schedule with fewer preemptions was run without error (search cut short or a run threw)`]),
    ...m.undecided.map((u) => `not shown necessary (search ran out of runs): ${u}`),
    ...m.errored.map((u) => `not shown necessary (could not be tried): ${u}`),
    ...(m.stopped?.untried ?? []).map((u) => `not shown necessary (not tried before the time limit): ${u}`),
  ];
}

/** One candidate simplification of a scenario: what it does, and the simpler scenario. */
interface Simplification {
  what: string;
  scenario: Scenario;
}

/**
 * Every one-step simplification in the dimensions a counterexample is judged
 * by (SPEC §4–5 readers count operations, workers, faults, instances and
 * attempts): drop an operation or a worker, lower a fault counter, remove a
 * fault, go down to one instance, allow one attempt fewer. Two timing faults
 * may merge into one of the summed length, so "slow processing plus a short
 * pause outlast the lease" can become one fault (a pure removal could not
 * lengthen the other delay).
 */
export function simplifications(s: Scenario, userClient = false): Simplification[] {
  return checkedSimplifications(s, userClient).valid;
}

/**
 * The one-step simplifications, sorted: `valid` are scenario files that
 * load (a minimised counterexample must load); a candidate the loader
 * refuses as a scenario ({@link ScenarioError}, e.g. a kill on an instance
 * that no longer exists) is no simplification at all and is dropped; any
 * other throw is a candidate that could not be checked, listed in
 * `errored` with the message — never mistaken for one that does not fail.
 */
export function checkedSimplifications(s: Scenario, userClient = false): { valid: Simplification[]; errored: string[] } {
  const valid: Simplification[] = [];
  const errored: string[] = [];
  for (const c of candidates(s, userClient)) {
    try {
      parseScenario(JSON.stringify(c.scenario));
      valid.push(c);
    } catch (e) {
      if (!(e instanceof ScenarioError)) errored.push(`${c.what} (the candidate could not be loaded: ${messageOf(e)})`);
    }
  }
  return { valid, errored };
}

function messageOf(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
}

function candidates(s: Scenario, userClient: boolean): Simplification[] {
  const out: Simplification[] = [];
  const f = s.faults;
  const withFaults = (faults: Partial<Scenario['faults']>, what: string) => out.push({ what, scenario: { ...s, faults: { ...f, ...faults } } });
  if (s.operations.length > 1) {
    // An operation that borrowed the dropped one's key goes back to its own.
    s.operations.forEach((op, i) => out.push({ what: `operation ${op.id}`, scenario: { ...s, operations: s.operations.filter((_, j) => j !== i).map((o) => (o.keyFrom === op.id ? withoutKeyFrom(o) : o)) } }));
  }
  s.operations.forEach((op, i) => {
    if (op.keyFrom !== undefined) out.push({ what: `key reuse by ${op.id}`, scenario: { ...s, operations: s.operations.map((o, j) => (j === i ? withoutKeyFrom(o) : o)) } });
  });
  s.operations.forEach((op, i) => {
    if (op.workers > 1) out.push({ what: `worker of ${op.id} (${op.workers} → ${op.workers - 1})`, scenario: { ...s, operations: s.operations.map((o, j) => (j === i ? { ...o, workers: o.workers - 1 } : o)) } });
  });
  if (f.loseResponseAfterCommit > 0) withFaults({ loseResponseAfterCommit: f.loseResponseAfterCommit - 1 }, `loseResponseAfterCommit ${f.loseResponseAfterCommit} → ${f.loseResponseAfterCommit - 1}`);
  if (f.crashMidRequest > 0) withFaults({ crashMidRequest: f.crashMidRequest - 1 }, `crashMidRequest ${f.crashMidRequest} → ${f.crashMidRequest - 1}`);
  if (f.slowMs > 0) {
    // Where and at which reach the slow fault strikes means nothing without it: the file keeps no knob that does nothing new.
    const { slowAtStepNth: _n, slowAtStep: _at, ...rest } = f;
    out.push({ what: 'slowMs', scenario: { ...s, faults: { ...rest, slowMs: 0 } } });
  }
  if (f.pause) {
    const { pause: _p, ...rest } = f;
    out.push({ what: 'pause', scenario: { ...s, faults: rest } });
  }
  if (f.kill) {
    const { kill: _k, ...rest } = f;
    out.push({ what: 'kill', scenario: { ...s, faults: rest } });
    // A kill as the n-th answer leaves needs n answers: while n stays, the
    // workers whose answers only count up to it cannot go (a kill at the 3rd
    // answer kept 3 workers and a slow step that one fewer answer frees).
    const n = f.kill.atAnswer;
    if (n !== undefined && n > 1) withFaults({ kill: { ...f.kill, atAnswer: n - 1 } }, `kill at answer ${n} → ${n - 1}`);
  }
  if (f.slowMs > 0 && f.pause) {
    const { pause, ...rest } = f;
    out.push({ what: 'pause merged into slowMs', scenario: { ...s, faults: { ...rest, slowMs: f.slowMs + pause.ms } } });
    withFaults({ slowMs: 0, pause: { ...pause, ms: pause.ms + f.slowMs } }, 'slowMs merged into pause');
  }
  // Front-end answers (a rate limiter's 429s, a gateway's 4xx/5xx) are faults too: one fewer, or none.
  for (const k of ['throttle', 'answer'] as const) {
    const x = s.network[k];
    if (x === undefined) continue;
    const { [k]: _x, ...rest } = s.network;
    out.push(x.count > 1
      ? { what: `network.${k} ${x.count} → ${x.count - 1}`, scenario: { ...s, network: { ...s.network, [k]: { ...x, count: x.count - 1 } } } }
      : { what: `network.${k}`, scenario: { ...s, network: rest } });
  }
  if (s.network.loseResponses > 0) out.push({ what: `network.loseResponses ${s.network.loseResponses} → ${s.network.loseResponses - 1}`, scenario: { ...s, network: { ...s.network, loseResponses: s.network.loseResponses - 1 } } });
  if (!userClient && s.client.model.resubmits > 0) out.push({ what: `model resubmits ${s.client.model.resubmits} → ${s.client.model.resubmits - 1}`, scenario: { ...s, client: { ...s.client, model: { ...s.client.model, resubmits: s.client.model.resubmits - 1 } } } });
  if (s.service.instances > 1 && (!f.kill || f.kill.instance === 0)) {
    out.push({ what: `instances ${s.service.instances} → 1`, scenario: { ...s, service: { ...s.service, instances: 1, clockOffsetMs: s.service.clockOffsetMs.slice(0, 1) } } });
  }
  if (s.service.clockOffsetMs.some((x) => x !== 0)) out.push({ what: 'clock skew', scenario: { ...s, service: { ...s.service, clockOffsetMs: [] } } });
  if (!userClient && s.client.keyReuseProbe) out.push({ what: 'keyReuseProbe', scenario: { ...s, client: { ...s.client, keyReuseProbe: undefined } } });
  if (!userClient && s.client.maxAttempts > 1) out.push({ what: `maxAttempts ${s.client.maxAttempts} → ${s.client.maxAttempts - 1}`, scenario: { ...s, client: { ...s.client, maxAttempts: s.client.maxAttempts - 1 } } });
  return out;
}

/**
 * Two simplifications in a row (each pair once, in a fixed order), for local minima that single steps cannot leave;
 * then, given the service's `steps`, each simplification with the kill (or the pause) moved to the first reach of
 * another step (or to an earlier reach of its own). A kill found at a step's n-th reach is tied to whatever made that reach: at the
 * 2nd reach of `parse`, the second worker's, while the first sleeps past its claim. Without that worker the kill
 * must strike elsewhere (the first worker's `book`), which no removal alone can do: the case stayed at 2 workers
 * and 2 faults, "minimal", where 1 worker and 1 kill fail the same way (until 2026-12).
 */
export function pairsOf(s: Scenario, userClient = false, steps: readonly string[] = []): Simplification[] {
  const out: Simplification[] = [];
  const seen = new Set<string>();
  const singles = simplifications(s, userClient);
  for (const a of singles) {
    for (const b of simplifications(a.scenario, userClient)) {
      const key = [a.what, b.what].sort().join(' + ');
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ what: `${a.what} + ${b.what}`, scenario: b.scenario });
    }
  }
  // The same for a pause that strikes at a step (a request of the instance stalls there).
  for (const a of singles) {
    for (const fault of ['kill', 'pause'] as const) {
      const k = a.scenario.faults[fault];
      if (k?.atStep === undefined) continue;
      const nth = k.nth ?? 1;
      const to = [...(nth > 1 ? [{ atStep: k.atStep, nth: nth - 1 }] : []), ...steps.filter((x) => x !== k.atStep).map((x) => ({ atStep: x, nth: 1 }))];
      for (const t of to) {
        const { nth: _n, ...rest } = k;
        const moved: Scenario = { ...a.scenario, faults: { ...a.scenario.faults, [fault]: { ...rest, atStep: t.atStep, ...(t.nth > 1 ? { nth: t.nth } : {}) } } };
        try {
          parseScenario(JSON.stringify(moved));
        } catch {
          continue; // not a scenario a file can hold: no candidate
        }
        out.push({ what: `${a.what} + ${fault} moved to the ${ordinalOf(t.nth)} reach of ${t.atStep}`, scenario: moved });
      }
    }
  }
  return out;
}

function ordinalOf(n: number): string {
  return n === 1 ? '1st' : n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}

/**
 * The scenario with its generated operations renamed op1..opN in order
 * (`keyFrom` and `expect.reports` follow), and what changed in words, or
 * undefined when the ids are already so (or are not the generator's
 * `op<n>`: a name someone chose stays). Not a relabelling of the same run:
 * an id names the random stream its workers' backoff jitter comes from
 * (`client/<id>/<worker>`), so the renamed scenario is run and judged in
 * its own right before it replaces the one in hand.
 */
export function renumbered(s: Scenario): { what: string; scenario: Scenario } | undefined {
  if (!s.operations.every((o) => /^op\d+$/.test(o.id))) return undefined;
  const name = new Map(s.operations.map((o, i) => [o.id, `op${i + 1}`]));
  const moved = s.operations.filter((o) => name.get(o.id) !== o.id);
  if (moved.length === 0) return undefined;
  const to = (id: string) => name.get(id) ?? id;
  const operations = s.operations.map((o) => ({ ...o, id: to(o.id), ...(o.keyFrom !== undefined ? { keyFrom: to(o.keyFrom) } : {}) }));
  const reports = s.expect.reports === undefined ? undefined : Object.fromEntries(Object.entries(s.expect.reports).map(([id, n]) => [to(id), n]));
  return {
    what: `renumbered ${moved.map((o) => `${o.id} → ${to(o.id)}`).join(', ')}`,
    scenario: { ...s, operations, expect: { ...s.expect, ...(reports !== undefined ? { reports } : {}) } },
  };
}

function withoutKeyFrom<O extends { keyFrom?: string }>(op: O): O {
  const { keyFrom: _k, ...rest } = op;
  return rest as O;
}

/** Runs of the schedule in hand on undecided candidates, in one pass: a limit of its own, since they may run after the budget is spent. */
const TRANSFER_RUNS_MAX = 500;

/** The default of {@link MinimiseOptions.finalRunsMax}. */
const FINAL_RUNS_MAX = 2_000;

function trimZeros(xs: readonly number[]): number[] {
  let n = xs.length;
  while (n > 0 && xs[n - 1] === 0) n--;
  return xs.slice(0, n);
}

function preemptionsOf(run: MinimisableRun): number {
  return run.result.choices.reduce((n, c) => n + (c.preempted ? 1 : 0), 0);
}

/**
 * Finishes what fast-check's shrinking starts. fast-check shrinks the
 * scenario and the choice list together but greedily, so it can stop with a
 * schedule that has more preemptions than the failure needs, or beside a
 * fault that is no longer needed. This pass
 *
 * 1. searches the scenario's schedules in increasing preemption bound
 *    ({@link searchBounded}) and keeps the failing one with the fewest
 *    preemptions, then the fewest non-default choices;
 * 2. tries every one-step {@link simplifications} (each with its own bounded
 *    schedule search, never allowing more preemptions than it has now) and
 *    takes the first that still fails, until none does.
 *
 * The result is minimal in preemptions for its scenario (when the search was
 * complete) and locally minimal in operations, workers, faults, instances
 * and attempts: no single removal keeps the failure. Anything that could
 * not be shown — a search cut short by its budget, a candidate whose run
 * threw — is listed (`undecided`, `errored`, `preemptionsMinimal: false`),
 * never reported as minimal. A time limit (`timeLimit`) that expires stops
 * the pass before its next run; the case in hand (which fails) is the
 * answer, and `stopped` says so.
 */
export async function minimiseCounterexample<R extends MinimisableRun = ScenarioRun>(scenario: Scenario, choices: readonly number[], o: MinimiseOptions<R>): Promise<Minimised> {
  const searchRunsMax = o.searchRunsMax ?? 1_000;
  const runsMax = o.runsMax ?? 6_000;
  const transferRunsMax = o.transferRunsMax ?? TRANSFER_RUNS_MAX;
  let finalLeft = o.finalRunsMax ?? FINAL_RUNS_MAX;
  // Without `run`, R is ScenarioRun (the default type argument): the plain scenario runner.
  const runOne = o.run ?? ((s: Scenario, c: ChoiceSource) => runScenario(s, { choices: c }) as unknown as Promise<R>);
  const userClient = o.userClient ?? false;
  // Once expired, expired for good: the pass stops at one point, and a clock
  // read again later cannot make a skipped step look tried.
  let stopped = false;
  const over = () => (stopped ||= o.timeLimit?.expired() === true);
  const stop = o.timeLimit !== undefined ? { stop: over } : {};
  let runs = 0;
  const first = await runOne(scenario, new ListChoice(choices));
  runs++;
  if (!o.isHit(first)) throw new CaseDoesNotFailError('minimiseCounterexample: the given case does not fail');
  let cur = { scenario, choices: trimZeros(choices), preemptions: preemptionsOf(first), decisions: choices.filter((c) => c !== 0).length, preemptionsMinimal: false };
  let curRun: R = first;

  // A run that throws is neither a hit nor a pass: it is remembered, and the
  // search that met it is not complete (it did not show that schedule passes).
  const search = async (s: Scenario, preemptionsMax: number, known?: BoundedHit<R>, budget = Math.min(searchRunsMax, Math.max(1, runsMax - runs))) => {
    let thrown: string | undefined;
    const r = await searchBounded(async (c) => {
      try {
        return await runOne(s, c);
      } catch (e) {
        thrown ??= messageOf(e);
        return undefined;
      }
    }, (x) => x !== undefined && o.isHit(x), {
      preemptionsMax,
      runsMax: budget,
      ...stop,
      ...(known ? { known } : {}),
    });
    runs += r.runs;
    return { ...r, best: r.best as BoundedHit<R> | undefined, complete: r.complete && thrown === undefined, thrown };
  };

  // A candidate whose schedule search could not decide it (the budget ran
  // out first: a scenario with many workers has far more schedules within
  // the bound than a search can run) gets one more chance: the schedule in
  // hand, replayed on it. Removing what the failure does not need usually
  // leaves the failing interleaving intact (the decisions of the removed
  // tasks shift, and a list choice wraps around). One run each, so even a
  // spent budget allows it (up to TRANSFER_RUNS_MAX in a pass); a hit is kept only within the preemptions the
  // case has now, and its preemptions are searched again at the end.
  let transfers = 0;
  const transferred = async (s: Scenario): Promise<BoundedHit<R> | undefined> => {
    if (transfers >= transferRunsMax || over()) return undefined;
    transfers++;
    runs++;
    try {
      const x = await runOne(s, new ListChoice(cur.choices));
      if (!o.isHit(x) || preemptionsOf(x) > cur.preemptions) return undefined;
      const taken = trimZeros(x.result.choices.map((c) => c.chosen));
      return { choices: taken, preemptions: preemptionsOf(x), decisions: taken.filter((c) => c !== 0).length, result: x };
    } catch {
      return undefined; // a throw decides nothing: the candidate stays undecided
    }
  };

  // Simplify first: a smaller scenario has a far smaller schedule space, so
  // its own schedule search is cheap. Each candidate's search stops at the
  // first bound with a hit, never above the preemptions the case has now.
  const removed: string[] = [];
  let undecided: string[] = [];
  let errored: string[] = [];
  /** This round's single steps the time limit left unjudged (it stopped their search, or came before it). */
  let untried: string[] = [];
  const take = (what: string, s: Scenario, hit: BoundedHit<R>, minimalHit: boolean) => {
    cur = { scenario: s, choices: hit.choices, preemptions: hit.preemptions, decisions: hit.decisions, preemptionsMinimal: minimalHit || hit.preemptions === 0 };
    curRun = hit.result;
    removed.push(what);
  };
  for (let improved = true; improved;) {
    improved = false;
    // Every round judges the current scenario afresh: what was left open
    // about an earlier, larger one says nothing about this one.
    const singles = checkedSimplifications(cur.scenario, userClient);
    undecided = [];
    untried = [];
    /** This round's steps the spent budget left unsearched, or searched with less than a search's own cap. */
    const starved = new Set<string>();
    errored = [...singles.errored];
    // Single steps first; only at a local minimum, pairs of steps: two
    // things can hold each other up (an operation that only consumes a kill
    // plan goes with the kill), and neither alone can go.
    for (const phase of ['single', 'pair'] as const) {
      for (const cand of phase === 'single' ? singles.valid : pairsOf(cur.scenario, userClient, o.steps)) {
        let hit: BoundedHit<R> | undefined;
        let minimalHit = false;
        if (over()) {
          // The time limit: no more runs. A single step is listed as not tried; pairs never are.
          if (phase === 'single') untried.push(cand.what);
          continue;
        }
        if (runs >= runsMax) {
          // The budget is spent: a single step never searched is not shown
          // unnecessary, unless the schedule in hand still fails on it.
          if (phase === 'single') {
            hit = await transferred(cand.scenario);
            if (hit === undefined) {
              undecided.push(cand.what);
              starved.add(cand.what);
            }
          }
        } else {
          if (runsMax - runs < searchRunsMax) starved.add(cand.what);
          const r = await search(cand.scenario, cur.preemptions);
          if (r.best) {
            hit = r.best;
            minimalHit = r.complete || r.best.preemptions === 0;
          } else if (phase === 'single') {
            if (r.thrown !== undefined) errored.push(`${cand.what} (${r.thrown})`);
            else if (!r.complete && over()) untried.push(cand.what);
            else if (!r.complete) {
              hit = await transferred(cand.scenario);
              if (hit === undefined) undecided.push(cand.what);
            }
          }
        }
        if (hit !== undefined) {
          take(cand.what, cand.scenario, hit, minimalHit);
          improved = true;
          break;
        }
      }
      if (improved) break;
    }
    // The scenario the rounds end at is the smallest, so its own schedule
    // searches are the cheapest, yet the budget the larger ones spent left
    // its steps undecided: search those once more from a reserve of their
    // own. A hit simplifies further (and the rounds go on); a complete
    // search without one shows the step necessary.
    if (!improved && starved.size > 0 && finalLeft > 0 && !over()) {
      const open = undecided;
      undecided = [];
      // `cur` changes only on a hit, which ends this loop: its candidates once.
      const valid = checkedSimplifications(cur.scenario, userClient).valid;
      for (const what of open) {
        const cand = valid.find((c) => c.what === what);
        // Only what the budget cut short: a search its own cap stopped would stop there again.
        if (cand === undefined || !starved.has(what) || finalLeft <= 0 || over()) {
          undecided.push(what);
          continue;
        }
        const before = runs;
        const r = await search(cand.scenario, cur.preemptions, undefined, Math.min(searchRunsMax, finalLeft));
        finalLeft -= runs - before;
        if (r.best) {
          take(what, cand.scenario, r.best, r.complete || r.best.preemptions === 0);
          improved = true;
          break;
        }
        if (r.thrown !== undefined) errored.push(`${what} (${r.thrown})`);
        else if (!r.complete) undecided.push(what);
      }
    }
    // At a local minimum whose operations are not op1..opN (op1 went, op2
    // stayed): the same scenario with them renumbered, as a reader expects
    // a one-operation file to say op1. It is another run (the ids name the
    // jitter streams), so it is searched like any candidate and taken only
    // when it still fails within the preemptions in hand; the rounds then
    // judge it afresh, so what the file says minimal is said of the
    // scenario written, whose own schedule, expect and hash it records.
    // When it does not fail so, or no budget is left to search it, the ids
    // stay (the run that fails is that one); a name is not worth a run past the budget.
    const renamed = !improved && !over() && runs < runsMax ? renumbered(cur.scenario) : undefined;
    if (renamed !== undefined) {
      const r = await search(renamed.scenario, cur.preemptions);
      if (r.best) {
        take(renamed.what, renamed.scenario, r.best, r.complete || r.best.preemptions === 0);
        improved = true;
      }
    }
  }
  if (!cur.preemptionsMinimal && over()) {
    // The time limit leaves no run for its own search; 0 preemptions is the fewest there is all the same.
    if (cur.preemptions === 0) cur = { ...cur, preemptionsMinimal: true };
  } else if (!cur.preemptionsMinimal) {
    // The scenario was already minimal (the case's schedule is as given), or
    // its schedule came from a search cut short or from the schedule in
    // hand: search its own schedules below it.
    const own = await search(cur.scenario, cur.preemptions, { choices: cur.choices, preemptions: cur.preemptions, decisions: cur.decisions, result: curRun });
    if (own.best) cur = { ...cur, choices: own.best.choices, preemptions: own.best.preemptions, decisions: own.best.decisions, preemptionsMinimal: own.complete || own.best.preemptions === 0 };
    if (own.thrown !== undefined) errored.push(`the schedule search of the scenario itself (${own.thrown})`);
  }
  // Only a limit that stopped something is news: a pass that judged every step before it expired is as shown.
  return { ...cur, removed, undecided, errored, runs, ...(stopped ? { stopped: { by: o.timeLimit!.what, untried } } : {}) };
}
