/**
 * The port of the built-in tracker onto the service API, held equal to the
 * path it replaces (TrackerInstance on its own Store, judged by the
 * tracker's own checkers): every scenario file under scenarios/, and the
 * first generated cases of every claim, run both ways must end the same —
 * the same decisions at the same times, the same trace, the same reports,
 * violations and recovery outcomes.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadScenario } from './load.js';
import { runScenario, type RunOptions, type ScenarioRun } from './run.js';
import type { Scenario } from './schema.js';
import { CLAIMS } from '../campaign/claims.js';
import { arbitraryFor } from '../campaign/run.js';
import { caseAt } from '../campaign/runs.js';
import { ListChoice } from '../sim/choice/list.js';
import { MATRIX_COLUMNS, MATRIX_ROWS, canonicalScenario, rowName } from './canonical.js';
import type { ChoiceSource } from '../sim/choice/source.js';
import type { Footprint } from '../sim/footprint.js';

/**
 * A list of choices that also records every step's declared footprint (a
 * source with `freeStep` is given them): the partial-order reduction sees
 * the same independence on both paths.
 */
class FootprintLog implements ChoiceSource {
  readonly name = 'list';
  readonly log: string[] = [];
  private readonly inner: ListChoice;
  constructor(list: readonly number[]) {
    this.inner = new ListChoice(list);
  }
  choose(labels: readonly string[], index: number, timeMs: number, continuing: boolean, fps?: ReadonlyArray<Footprint | undefined>): number {
    this.log.push(JSON.stringify({ t: timeMs, labels, fps: fps ?? null }));
    return this.inner.choose(labels, index);
  }
  freeStep(label: string, fp: Footprint | undefined, timeMs: number): void {
    this.log.push(JSON.stringify({ t: timeMs, label, fp: fp ?? null }));
  }
}

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : []));
}

function summary(r: ScenarioRun) {
  return {
    reports: r.reports,
    violations: r.violations,
    choices: r.result.choices,
    timeMs: r.result.timeMs,
    traceHash: r.result.traceHash,
    trace: r.trace,
    attempts: r.operations.map((o) => o.attempts),
    results: r.operations.map((o) => o.results),
    recovery: [...r.recovery],
    recoveryTrace: r.recoveryTrace,
  };
}

/**
 * memory_singleflight names each process's maps `mem:<n>` from a global
 * counter (one resource per process); number them by first appearance so
 * two runs compare by structure, not by how many processes came before.
 */
function numberProcesses(log: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return log.map((l) => l.replace(/mem:\d+/g, (m) => `mem#${seen.get(m) ?? (seen.set(m, seen.size + 1), seen.size)}`));
}

async function both(s: Scenario, choices: readonly number[], opts: RunOptions) {
  const outcome = async (legacy: boolean) => {
    const source = new FootprintLog(choices);
    try {
      return { ...summary(await runScenario(s, { ...opts, choices: source, legacyTracker: legacy })), footprints: numberProcesses(source.log) };
    } catch (e) {
      return { threw: (e as Error).message };
    }
  };
  return { legacy: await outcome(true), service: await outcome(false) };
}

/** Generated cases per claim (RETRYSIM_PORT_CASES raises it for a longer comparison). */
const CASES = Number(process.env.RETRYSIM_PORT_CASES ?? 60);

describe('the tracker through the service API runs exactly as the pre-port path', () => {
  it.each(files('scenarios'))('%s', async (f) => {
    const s = loadScenario(f);
    const { legacy, service } = await both(s, s.schedule.map((c) => c.chosen), { keepTrace: true });
    expect(service).toEqual(legacy);
  });

  it.each(CLAIMS.map((c) => c.id))('generated cases of %s', async (id) => {
    const claim = CLAIMS.find((c) => c.id === id)!;
    const arb = arbitraryFor(claim);
    for (let i = 0; i < CASES; i++) {
      const c = caseAt(arb, 7, i).value;
      const { legacy, service } = await both(c.scenario, c.choices, { keepTrace: true });
      expect(service, `${id} case ${i}`).toEqual(legacy);
    }
  });

  it('the matrix (seeds 1–3): every cell, every run', async () => {
    for (let seed = 1; seed <= 3; seed++) {
      for (const row of MATRIX_ROWS) {
        for (const col of MATRIX_COLUMNS) {
          const s = canonicalScenario(col, row, seed);
          const legacy = summary(await runScenario(s, { keepTrace: true, legacyTracker: true }));
          const service = summary(await runScenario(s, { keepTrace: true }));
          expect(service, `${rowName(row)} ${col} seed ${seed}`).toEqual(legacy);
        }
      }
    }
  });
});
