import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { moduleFlag, moduleLoadsOf } from '../app/define.js';
import type { GeneratedCase } from '../scenario/arbitraries.js';
import { printScenario } from '../scenario/load.js';
import { scheduleOf } from '../scenario/record.js';
import { runScenario } from '../scenario/run.js';
import type { Scenario } from '../scenario/schema.js';
import { hashJson } from '../sim/canonical.js';
import { RecordingChoice } from '../sim/choice/recording.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import type { ServiceDefinition } from './definition.js';
import { ServiceError } from './errors.js';

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
}

/**
 * Writes the run that stopped a campaign (a request never answered, a
 * limit the service ran into) as a scenario file, so that its reader can
 * replay it with `--trace` and see what led there — until 2026-12 such a
 * stop named a request (`s1/op1.w0#4`) of a run nobody could look at, and
 * the only way back was the whole campaign again. The case runs once more
 * with its decisions recorded (a run that throws hands none back); when it
 * does not stop again, nothing is written. Not a verdict: the file expects
 * no violation and replays to the same stop, exit 2.
 */
export async function writeStoppedRun(def: ServiceDefinition, module: string, c: GeneratedCase, choices: ChoiceSource, seed: number, foundDir: string | undefined, stopped: Omit<StoppedRun, 'file' | 'replay'>, foundBy: 'check' | 'vitest' = 'check'): Promise<StoppedRun> {
  const rec = new RecordingChoice(choices);
  let error: ServiceError;
  try {
    await runScenario(c.scenario, { choices: rec, service: def, hashTrace: false });
    return stopped;
  } catch (e) {
      if (!(e instanceof ServiceError && e.ofTheRun)) return stopped;
    error = e;
  }
  if (foundDir === undefined) return stopped;
  const scenario: Scenario = {
    ...c.scenario,
    ...(moduleLoadsOf(def) === 'per-process' ? { service: { ...c.scenario.service, moduleLoads: 'per-process' as const } } : {}),
    name: `${def.name}: the run that stopped the campaign`,
    description: `Run ${stopped.run} of ${foundBy === 'vitest' ? 'a vitest property (retrysim\'s vitest helper, ' : `retrysim check ${moduleFlag(def)} ${module} (`}seed ${seed})${stopped.shrinking ? ', tried while shrinking its failure,' : ''} stopped the campaign${stopped.shrinking ? '' : stopped.exhaustive ? ' (schedule ' + stopped.run + ' of its exhaustive search)' : ' (the smallest such case fast-check found)'}: ${error.message}. Not a verdict: replayed with --trace it shows the run up to the stop.`,
    schedule: scheduleOf(rec.records),
    expect: { violations: [] },
  };
  const file = writeStoppedScenario(foundDir, def.name, scenario);
  return { ...stopped, file, replay: `retrysim replay ${moduleFlag(def)} ${module} ${file} --trace` };
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
