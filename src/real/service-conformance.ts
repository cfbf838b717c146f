import { SCENARIO_FORMAT, scenarioSchema, type Scenario, type ScenarioInput } from '../scenario/schema.js';
import { runScenario } from '../scenario/run.js';
import type { KeySource } from '../harness/keys.js';
import type { ServiceDefinition } from '../service/definition.js';
import { registerService } from '../service/registry.js';
import { ListChoice } from '../sim/choice/list.js';
import { runScenarioReal } from './scenario-real.js';
import { serviceIntent } from '../scenario/arbitraries.js';
import { serviceEpochField } from '../service/epoch.js';
import type { OperationEnd } from '../checkers/invariants.js';
import type { RecoveryOutcome } from '../checkers/progress.js';

/**
 * Conformance for a user's service: the simulation held against reality.
 * A fixed set of scenarios, built from what the service declares (its
 * crash points, its steps), runs twice — on the kernel through the service
 * API, and against `retrysim serve --service` child processes on a SQLite
 * file with real faults, real time and a real `kill -9` — and each pair is
 * compared on the effects the operation left and the invariants that broke.
 *
 * The simulation side runs the schedule without preemptions. That is what
 * real mode does: there `sim.step` is an immediate yield (a resolved
 * promise), so a request runs on past a step and other requests only get in
 * where it waits on time (a sleep, slow processing) — the same as a
 * schedule that never switches away from a task that can continue. The
 * other interleavings are what `retrysim check --service` explores; here a
 * racy column would otherwise compare two arbitrary samples.
 *
 * `progress` (invariant 5), when the service declares it: both sides run
 * the recovery phase — the faults stop, `settleMs` passes (virtual time in
 * the simulation, real time against the processes), and an operation that
 * had not succeeded asks the service's query and resubmits with the same
 * client (scenario/recovery.ts) — and the same checker judges it. Each
 * side's cell says how the operation ended ({@link Eventually}).
 */

/**
 * How one column's operation ended, progress included: `succeeded` in the
 * main run; after the recovery phase `found` (the query showed its effect),
 * `resubmitted` (a resubmission got a 2xx), `refused` (a non-retryable
 * answer), `gave_up` (the budget ran out with no success); `not judged` when
 * the service does not declare `progress` and the main run did not succeed.
 */
export type Eventually = 'succeeded' | 'found' | 'resubmitted' | 'refused' | 'gave_up' | 'not judged';

export function eventually(op: OperationEnd | undefined, recovery: ReadonlyMap<string, RecoveryOutcome>, declared: boolean): Eventually {
  if (op?.results.some((r) => r.kind === 'success')) return 'succeeded';
  const rec = op === undefined ? undefined : recovery.get(op.id);
  if (!declared || rec === undefined) return 'not judged';
  return rec.kind === 'success' ? 'resubmitted' : rec.kind;
}

/** One conformance column: a scenario, named. */
export interface ServiceColumn {
  name: string;
  description: string;
  scenario: Scenario;
}

/** One column in both worlds. */
export interface ServiceConformanceCell {
  column: string;
  sim: { effects: number; violations: string[]; eventually: Eventually };
  /** `unsettled`: instances still at work (requests, deferred timers) when the settle limit ran out; their effects were read then. */
  real: { effects: number; violations: string[]; eventually: Eventually; kills: number; wallMs: number; unsettled: string[] };
  /** Same effects and the same set of broken invariants (progress included). */
  same: boolean;
}

/**
 * A column's one operation, in the service's own words, as `check --service`
 * generates its first one (run-1, `<noun> 1`): the same body the campaign
 * sends. It was a payment's ('Pay order 1' in module 'shop') whatever the
 * service, so a service that validates its operation's fields answered 500
 * to every request here while check found it working, and both worlds
 * "agreed" on doing nothing.
 */
function operationOf(def: ServiceDefinition) {
  return { id: 'op1', runId: 'run-1', ...serviceIntent(def.effects.noun, 1) };
}

/**
 * The columns for a service, in order: no fault; a lost answer after the
 * commit; an answer lost on the way back; a crash at each declared crash
 * point; a concurrent duplicate (two workers, slow processing); the same on
 * two instances sharing the file; a `kill -9` at each declared step, and
 * one as the first answer leaves, each with a restart on the same file; the
 * same key sent with a different body.
 */
export function serviceColumns(def: ServiceDefinition, module: string, keySource: KeySource = 'tool_call', seed = 1): ServiceColumn[] {
  const OP = operationOf(def);
  // The simulated side lives in the present, as the real processes do: a
  // service that stores a claim time in unix seconds and reads 0 as "unset"
  // would otherwise differ from itself in 1970 alone (src/sim/epoch.ts).
  const epoch = serviceEpochField(def);
  type Parts = { client?: Partial<ScenarioInput['client']>; faults?: ScenarioInput['faults']; network?: ScenarioInput['network']; service?: { instances?: number }; operations?: ScenarioInput['operations'] };
  const col = (name: string, description: string, s: Parts): ServiceColumn => ({
    name,
    description,
    scenario: scenarioSchema.parse({
      format: SCENARIO_FORMAT,
      name: `${name} · ${def.name}`,
      description,
      seed,
      operations: [OP],
      ...s,
      service: { module, ...epoch, ...s.service },
      client: { ...s.client, keySource },
      expect: {},
    } satisfies ScenarioInput),
  });
  const cols: ServiceColumn[] = [
    col('no_fault', 'One operation, no fault.', {}),
    col('lost_response', 'The work is committed, then the connection closes without an answer; the client retries.', { faults: { loseResponseAfterCommit: 1 } }),
    col('lost_answer', 'The first answer is lost on the way back (whatever it was); the client retries.', { network: { loseResponses: 1 } }),
    ...(def.crashPoints ?? []).map((p) => col(`crash_at:${p}`, `The handler crashes at crash point '${p}' (500); the client retries.`, { faults: { crashMidRequest: 1, crashAt: p } })),
    col('concurrent_duplicate', 'Two workers send the same operation at once while processing is slow (100 ms).', { client: { maxAttempts: 6 }, faults: { slowMs: 100 }, operations: [{ ...OP, workers: 2 }] }),
    col('two_instances', 'As concurrent_duplicate, the two requests on two processes sharing the database file.', { service: { instances: 2 }, client: { maxAttempts: 6 }, faults: { slowMs: 100 }, operations: [{ ...OP, workers: 2 }] }),
    ...def.steps.map((st) => col(`kill_at:${st}`, `kill -9 of the process when the request reaches step '${st}'; restart on the same file. Ten attempts outlast the restart.`, {
      client: { maxAttempts: 10 },
      faults: { kill: { instance: 0, atStep: st, restartAfterMs: 500 } },
    })),
    // A service whose own step is named 'answer' has a kill_at:answer column already: two columns of one name
    // (one --columns entry, two cells in --json) were told apart by nothing.
    col(def.steps.includes('answer') ? 'kill_at:answer-leaves' : 'kill_at:answer', 'kill -9 of the process once its handler returned, before the answer leaves (the work done, in-process memory lost); restart on the same file. Ten attempts outlast the restart.', {
      client: { maxAttempts: 10 },
      faults: { kill: { instance: 0, atAnswer: 1, restartAfterMs: 500 } },
    }),
  ];
  // No key to reuse: the client sends none, or the service reads none (operation.readsKey: false, idempotent by its URL).
  if (keySource !== 'none' && def.operation.readsKey !== false) cols.push(col('key_reuse', 'After a success, the same key is sent once more with a different body: it must be refused without effect.', { client: { keyReuseProbe: true } }));
  return cols;
}

/**
 * The restart delay of a kill column, chosen so that the outcome does not
 * hinge on a few milliseconds (as for the tracker's kill column): the
 * simulation runs once with the process never coming back, which gives the
 * times of the retries that find it down; the restart goes in the middle of
 * the widest gap between two of them in 150–700 ms after the kill.
 */
export async function restartBetweenRetries(s: Scenario, def: ServiceDefinition): Promise<number> {
  const kill = s.faults.kill!;
  const probe = await runScenario({ ...s, faults: { ...s.faults, kill: { ...kill, restartAfterMs: 60_000 } } }, { service: def, choices: new ListChoice([]) });
  const attempts = [...probe.operations[0]!.attempts].sort((a, b) => a.startMs - b.startMs);
  const killed = attempts.find((a) => a.outcome.kind === 'transport')?.endMs;
  if (killed === undefined) return kill.restartAfterMs; // the step was never reached: nothing to place
  const times = [0, ...attempts.filter((a) => a.startMs > killed).map((a) => a.startMs - killed)];
  let best = { width: -1, mid: kill.restartAfterMs };
  for (let i = 1; i < times.length; i++) {
    const lo = Math.max(times[i - 1]!, 150);
    const hi = Math.min(times[i]!, 700);
    if (hi - lo > best.width) best = { width: hi - lo, mid: Math.round((lo + hi) / 2) };
  }
  return best.width > 0 ? best.mid : kill.restartAfterMs;
}

/** Options of {@link runServiceConformance}. */
export interface ServiceConformanceOptions {
  def: ServiceDefinition;
  /** The module path the real processes load (`serve --service PATH`). */
  module: string;
  keySource?: KeySource;
  seed?: number;
  /** Column names to run; default all. */
  columns?: readonly string[];
  onCell?: (c: ServiceConformanceCell, done: number, total: number) => void;
}

function invariantSet(vs: readonly { invariant: string }[]): string[] {
  return [...new Set(vs.map((v) => v.invariant))].sort();
}

/** Runs the selected columns in both worlds, one after the other (real runs are timing-sensitive). */
export async function runServiceConformance(o: ServiceConformanceOptions): Promise<ServiceConformanceCell[]> {
  registerService(o.module, o.def);
  const all = serviceColumns(o.def, o.module, o.keySource, o.seed);
  for (const c of o.columns ?? []) {
    if (!all.some((x) => x.name === c)) throw new Error(`unknown column '${c}'; columns: ${all.map((x) => x.name).join(', ')}`);
  }
  const chosen = all.filter((c) => o.columns === undefined || o.columns.includes(c.name));
  const out: ServiceConformanceCell[] = [];
  for (const c of chosen) {
    let s = c.scenario;
    if (s.faults.kill !== undefined) s = { ...s, faults: { ...s.faults, kill: { ...s.faults.kill, restartAfterMs: await restartBetweenRetries(s, o.def) } } };
    const sim = await runScenario(s, { service: o.def, choices: new ListChoice([]) });
    const real = await runScenarioReal(s, { service: o.def, recovery: true });
    const declared = o.def.progress !== undefined;
    const simV = invariantSet(sim.violations);
    const realV = invariantSet(real.violations);
    const cell: ServiceConformanceCell = {
      column: c.name,
      sim: { effects: sim.reports.op1 ?? 0, violations: simV, eventually: eventually(sim.operations[0], sim.recovery, declared) },
      real: { effects: real.reports.op1 ?? 0, violations: realV, eventually: eventually(real.operations[0], real.recovery, declared), kills: real.kills, wallMs: real.wallMs, unsettled: real.unsettled },
      same: (sim.reports.op1 ?? 0) === (real.reports.op1 ?? 0) && simV.join() === realV.join(),
    };
    out.push(cell);
    o.onCell?.(cell, out.length, chosen.length);
  }
  return out;
}
