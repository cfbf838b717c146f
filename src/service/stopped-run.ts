import { mkdirSync, writeFileSync } from 'node:fs';
import { shellArg } from '../report/shell.js';
import { join } from 'node:path';
import { moduleFlag, moduleLoadsOf } from '../app/define.js';
import type { GeneratedCase } from '../scenario/arbitraries.js';
import { printScenario } from '../scenario/load.js';
import { scheduleOf } from '../scenario/record.js';
import { runScenario } from '../scenario/run.js';
import type { Scenario } from '../scenario/schema.js';
import { hashJson } from '../sim/canonical.js';
import { RecordingChoice } from '../sim/choice/recording.js';
import type { ChoiceRecord, ChoiceSource } from '../sim/choice/source.js';
import { ListChoice } from '../sim/choice/list.js';
import type { RunResult } from '../sim/kernel.js';
import { CaseDoesNotFailError, minimiseCounterexample, notShownMinimal, type MinimiseOptions, type Minimised } from '../campaign/minimise.js';
import type { ServiceDefinition } from './definition.js';

/** Where a campaign's stopping run was written, for the line under the stop. */
export interface StoppedRun {
  /** 1-based run number of the campaign (before any failure), or the failing run whose shrinking it stopped. */
  run: number;
  /** True when the run was a candidate while shrinking run `run`'s failure. */
  shrinking: boolean;
  /** True for a schedule of an exhaustive search (not shrunk: the search's own order is smallest first). */
  exhaustive?: boolean;
  /** The scenario file (absent: the case did not stop again, or no folder to write in). */
  file?: string;
  /** The command that replays it with its timeline. */
  replay?: string;
  /** The stop as the written file's run says it (the minimised run may stop at another request than the run found). */
  message?: string;
}

/**
 * Puts what was written on the error that stopped the campaign, and its
 * message as the file's run says it: the line printed and the file's
 * replay name the same request.
 */
export function adoptStop<E extends Error & { stopped?: StoppedRun }>(e: E, stopped: StoppedRun): E {
  e.stopped = stopped;
  if (stopped.message !== undefined) e.message = stopped.message;
  return e;
}

/**
 * Writes the run that stopped a campaign (a request never answered, a
 * limit the service ran into) as a scenario file, so that its reader can
 * replay it with `--trace` and see what led there — until 2026-12 such a
 * stop named a request (`s1/op1.w0#4`) of a run nobody could look at, and
 * the only way back was the whole campaign again. The case is minimised
 * as a counterexample is, with "stops the same way" as the failure
 * ({@link minimiseStop}); when it does not stop again, nothing is written.
 * Not a verdict: the file expects no violation and replays to the same
 * stop, exit 2.
 */
/**
 * A written file's `service`: the module its replay line loads (the vitest
 * helper may learn it only after its cases were generated under the
 * definition's name: src/service/defined-in.ts), and for an app found with
 * one module load per simulated process, that it replays only so (absent:
 * once).
 */
export function serviceInFile(s: Scenario['service'], def: ServiceDefinition, module: string | undefined): Scenario['service'] {
  return { ...s, ...(module !== undefined ? { module } : {}), ...(moduleLoadsOf(def) === 'per-process' ? { moduleLoads: 'per-process' as const } : {}) };
}

export async function writeStoppedRun(def: ServiceDefinition, module: string, c: GeneratedCase, choices: ChoiceSource, seed: number, foundDir: string | undefined, stopped: Omit<StoppedRun, 'file' | 'replay'>, foundBy: 'check' | 'vitest' = 'check', timeLimit?: MinimiseOptions['timeLimit']): Promise<StoppedRun> {
  const m = await minimiseStop(c.scenario, choices, (s, ch) => runScenario(s, { choices: ch, service: def, hashTrace: false }), { ...(timeLimit !== undefined ? { timeLimit } : {}) });
  if (m === undefined || foundDir === undefined) return stopped;
  const scenario: Scenario = {
    ...m.scenario,
    service: serviceInFile(m.scenario.service, def, module),
    name: `${def.name}: the run that stopped the campaign`,
    description: `Run ${stopped.run} of ${foundBy === 'vitest' ? 'a vitest property (retrysim\'s vitest helper, ' : `retrysim check ${moduleFlag(def)} ${shellArg(module)} (`}seed ${seed})${stopped.shrinking ? ', tried while shrinking its failure,' : ''} stopped the campaign${stopped.exhaustive ? ` (schedule ${stopped.run} of its exhaustive search)` : ''}; minimised as a counterexample is${m.minimal ? '' : ` (not known minimal: ${m.notMinimal.join('; ')})`}: ${m.error.message}. Not a verdict: replayed with --trace it shows the run up to the stop.`,
    schedule: scheduleOf(m.records),
    expect: { violations: [] },
  };
  const file = writeStoppedScenario(foundDir, def.name, scenario);
  return { ...stopped, file, replay: `retrysim replay ${moduleFlag(def)} ${shellArg(module)} ${shellArg(file)} --trace`, message: m.error.message };
}

/** A stop the run's course led to, as a service's or a client's error says it. */
type Stop = Error & { ofTheRun: boolean };

function isStop(e: unknown): e is Stop {
  return e instanceof Error && (e as Partial<Stop>).ofTheRun === true;
}

/** What kind of stop a message says (`never answered`, `a run did not end`, `the client is waiting`): the minimiser keeps that kind. */
function stopKind(e: Error): string {
  return e.message.replace(/^[^:]*: /, '').split(/[:(]/)[0]!.replace(/\b(request|POST|GET|PUT|PATCH|DELETE)\b.*$/, '').trim();
}

/**
 * The smallest case found that stops the same way as `scenario` on
 * `choices`: the counterexample minimiser (fewest preemptions, then no
 * removable operation, worker, fault, instance or attempt), with "stops
 * the same way" as its hit, and each run's decisions recorded (a run that
 * throws hands none back). Undefined when the case does not stop again.
 * Bounded (500 runs, and `timeLimit`): a stop near the one-hour limit is
 * a slow run.
 */
export async function minimiseStop(scenario: Scenario, choices: ChoiceSource, run: (s: Scenario, choices: ChoiceSource) => Promise<unknown>, o: { timeLimit?: MinimiseOptions['timeLimit']; userClient?: boolean } = {}): Promise<{ scenario: Scenario; records: ChoiceRecord[]; error: Stop; minimal: boolean; notMinimal: string[] } | undefined> {
  const once = async (s: Scenario, ch: ChoiceSource): Promise<{ result: RunResult; stop?: Stop }> => {
    const rec = new RecordingChoice(ch);
    try {
      await run(s, rec);
      return { result: resultOf(rec.records) };
    } catch (e) {
      if (isStop(e)) return { result: resultOf(rec.records), stop: e };
      throw e;
    }
  };
  const first = await once(scenario, choices);
  if (first.stop === undefined) return undefined;
  const kind = stopKind(first.stop);
  const isHit = (r: { stop?: Stop }) => r.stop !== undefined && stopKind(r.stop) === kind;
  let m: Minimised;
  try {
    m = await minimiseCounterexample(scenario, first.result.choices.map((x) => x.chosen), { isHit, run: once, runsMax: 500, searchRunsMax: 200, ...(o.userClient ? { userClient: true } : {}), ...(o.timeLimit !== undefined ? { timeLimit: o.timeLimit } : {}) });
  } catch (e) {
    if (e instanceof CaseDoesNotFailError) return { scenario, records: first.result.choices, error: first.stop, minimal: false, notMinimal: ['the minimiser could not rerun it'] };
    throw e;
  }
  const last = await once(m.scenario, new ListChoice(m.choices));
  if (!isHit(last)) return { scenario, records: first.result.choices, error: first.stop, minimal: false, notMinimal: ['the minimised case did not stop again'] };
  const notMinimal = notShownMinimal(m);
  return { scenario: m.scenario, records: last.result.choices, error: last.stop!, minimal: notMinimal.length === 0, notMinimal };
}

/** A run's result as the minimiser reads it: its decisions. */
function resultOf(choices: ChoiceRecord[]): RunResult {
  return { timeMs: 0, lastEventMs: 0, events: 0, steps: 0, choices, traceHash: '' };
}

/** Writes a stopped run's scenario as `<name>-stopped-<hash>.json` in `foundDir`; returns the path. */
export function writeStoppedScenario(foundDir: string, name: string, scenario: Scenario): string {
  mkdirSync(foundDir, { recursive: true });
  const file = join(foundDir, `${name.replace(/[^A-Za-z0-9_-]/g, '_')}-stopped-${hashJson(scenario).slice(0, 8)}.json`);
  writeFileSync(file, printScenario(scenario));
  return file;
}

/** The line under a stop: which run, and the file that replays it. */
export function stoppedRunLine(s: StoppedRun): string {
  const which = s.shrinking ? `a run tried while shrinking run ${s.run}'s failure` : `run ${s.run}`;
  return s.file === undefined ? `  it stopped at ${which} (not written: the case did not stop again when run once more)`
    : `  it stopped at ${which}: ${s.file} — ${s.replay} shows the run up to the stop`;
}
