import type { GeneratedCase } from '../scenario/arbitraries.js';
import { runScenario, type ScenarioRun } from '../scenario/run.js';
import { ListChoice } from '../sim/choice/list.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import type { ServiceDefinition } from '../service/definition.js';

/**
 * State an app keeps at module level that carries over from one simulated
 * run to the next, and changes what the later runs answer.
 *
 * A campaign loads the app's modules once. Every run starts its clocks at
 * the same virtual instant, so a module-level store that counts by time —
 * express-rate-limit's `MemoryStore` behind the `rateLimit()` its README
 * creates at the top of the file — never sees its window pass: its hits
 * pile up over the runs, and after about a hundred requests every request
 * of every later run is answered 429 before the app's code runs. Such a
 * campaign "held" thousands of runs that tested nothing (an Express app
 * whose bug the same campaign finds at run 579 with the limiter built
 * inside `app()` held 3,000 runs with it at module level). The module probe
 * (per-process loads of the first 50 runs) does not see it: those runs come
 * before the store fills.
 *
 * So the first runs of a holding campaign run again once it is over, in the
 * same process, and their answers are compared with what they answered at
 * the start: a run depends only on its scenario, so a difference is state
 * that outlived the runs before it.
 */

/** How many of the campaign's first runs run again at its end. */
export const FIRST_RUNS_RECHECKED = 3;

/**
 * What a run's requests were answered, in the terms a verdict reads: each
 * attempt's status (or transport failure) and whether it was a replay, the
 * effects per operation, the invariants broken. Ids and bodies are left
 * out: a module-level id generator (uuid v7's monotonic state) may number
 * them differently on a later run without changing what happened.
 */
export function answersOf(r: ScenarioRun): string {
  const ops = r.operations.map((op) => op.attempts.map((a) => (a.outcome.kind === 'http' ? String(a.outcome.status) : a.outcome.reason) + (a.replay ? ' (replay)' : '')).join(', ') || 'nothing sent');
  const effects = Object.entries(r.reports).map(([op, n]) => `${op}=${n}`).join(' ');
  const broken = [...new Set(r.violations.map((v) => v.invariant))].sort().join(', ');
  return `${ops.join('; ')} — effects ${effects}${broken === '' ? '' : ` — broke ${broken}`}`;
}

/** A run whose answers changed between the start of the campaign and its end. */
export interface CarriedOver {
  /** 1-based run number. */
  run: number;
  before: string;
  after: string;
}

/** Keeps the first runs of a campaign, to run them again at its end. */
export class FirstRuns {
  private readonly kept: Array<{ run: number; c: GeneratedCase; answers: string }> = [];

  /** @param choicesOf the schedule a case ran with: its generated choices (random), or its PCT source (`--explore pct`). */
  constructor(private readonly choicesOf: (c: GeneratedCase) => Promise<ChoiceSource> = (c) => Promise.resolve(new ListChoice(c.choices)), private readonly max = FIRST_RUNS_RECHECKED) {}

  /** Notes run `index` (0-based) of the campaign; only the first `max` are kept. */
  note(index: number, c: GeneratedCase, r: ScenarioRun): void {
    if (this.kept.length < this.max) this.kept.push({ run: index + 1, c, answers: answersOf(r) });
  }

  /** Runs the kept runs again on `def` (its modules as the campaign left them): the first whose answers changed, if any. */
  async recheck(def: ServiceDefinition): Promise<CarriedOver | undefined> {
    for (const k of this.kept) {
      const r = await runScenario(k.c.scenario, { choices: await this.choicesOf(k.c), service: def, hashTrace: false });
      const after = answersOf(r);
      if (after !== k.answers) return { run: k.run, before: k.answers, after };
    }
    return undefined;
  }
}

/** The inconclusive verdict's one line: what changed, why the later runs say nothing, and the two ways out. */
export function carriedStateLine(app: string, c: CarriedOver, perProcessCommand: string): string {
  return `app '${app}' keeps state at module level that changed its answers from one simulated run to the next: run ${c.run} was answered ${c.before}, and run again after the campaign ${c.after} (a rate limiter, cache or counter created at the top of a module, whose window never passes since every run starts at the same virtual instant), so the runs after the first few did not test what they say; create it inside app(), as each real process does, or run the campaign with one module load per process: ${perProcessCommand}`;
}

/**
 * The inconclusive verdict's line when a once-loaded campaign failed only
 * because of what earlier runs left at module level (`why`: the failing run
 * passed when run again, or its file did not reproduce in a fresh process)
 * and the per-process probe's runs hold. Such an app is not malformed — a
 * Lambda-style module keeps its idempotency handler and local cache at the
 * top of the file, one per real process — so this is no exit 2: the
 * verdict needs every run loaded per process.
 */
export function carriedFailureLine(app: string, failed: { run: number | undefined; invariants: string }, why: string, probeRuns: number, perProcessCommand: string): string {
  const run = failed.run === undefined ? 'a run' : `run ${failed.run}`;
  return `app '${app}' keeps state at module level that carried over from one simulated run to the next: ${run} failed ${failed.invariants} only after the runs before it (${why}), and with one module load per simulated process, as real processes load them, the first ${probeRuns} runs hold; a verdict needs every run loaded that way: ${perProcessCommand}`;
}
