/**
 * Replay is a contract (DESIGN invariant 3): a generated scenario run with a
 * fast-check choice list, then replayed from the schedule it recorded, gives
 * the identical trace hash — and so does a replay in a second process.
 */
import { describe, expect } from 'vitest';
import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scenarioArbitrary } from '../src/scenario/arbitraries.js';
import { HARNESS_FAULTS } from '../src/campaign/claims.js';
import { runScenario } from '../src/scenario/run.js';
import { ListChoice } from '../src/sim/choice/list.js';
import { ReplayChoice } from '../src/sim/choice/replay.js';
import { printScenario } from '../src/scenario/load.js';
import { BUILTIN_SERVICES as VARIANTS } from '../src/tracker/builtin.js';
import { KEY_SOURCES } from '../src/harness/keys.js';
import { tempDirs } from '../src/testing/temp-dirs.js';

const tmp = tempDirs();

const anyCase = fc.constantFrom(...VARIANTS).chain((variant) =>
  fc.constantFrom(...KEY_SOURCES).chain((keySource) => scenarioArbitrary({ variant, keySource, faults: HARNESS_FAULTS })));

describe('record → replay gives the identical trace', () => {
  test.prop([anyCase], { numRuns: 200 })('for generated scenarios of every variant and key source', async ({ scenario, choices }) => {
    const rec = await runScenario(scenario, { choices: new ListChoice(choices) });
    const rep = await runScenario({ ...scenario, schedule: rec.result.choices });
    expect(rep.result.traceHash).toBe(rec.result.traceHash);
    expect(rep.reports).toEqual(rec.reports);
    // The recorded schedule, used as an explicit replay source, too.
    const rep2 = await runScenario(scenario, { choices: new ReplayChoice(rec.result.choices) });
    expect(rep2.result.traceHash).toBe(rec.result.traceHash);
  });

  test('a replay in a second process agrees', async () => {
    const dir = tmp('retrysim-det-');
    const cases = fc.sample(anyCase, { seed: 99, numRuns: 8 });
    const expected: string[] = [];
    const files: string[] = [];
    for (const [i, c] of cases.entries()) {
      const rec = await runScenario(c.scenario, { choices: new ListChoice(c.choices) });
      const file = join(dir, `s${i}.json`);
      writeFileSync(file, printScenario({ ...c.scenario, schedule: rec.result.choices, expect: { reports: rec.reports, violations: [...new Set(rec.violations.map((v) => v.invariant))] } }));
      files.push(file);
      expected.push(rec.result.traceHash);
    }
    const bin = join(import.meta.dirname, '..', 'bin', 'retrysim.js');
    const got = files.map((f) => JSON.parse(execFileSync(process.execPath, [bin, 'replay', f, '--json'], { encoding: 'utf8' })).traceHash as string);
    expect(got).toEqual(expected);
  });
});
