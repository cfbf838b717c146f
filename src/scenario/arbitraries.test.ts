import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CLAIMS } from '../campaign/claims.js';
import { arbitraryFor } from '../campaign/run.js';
import { caseAt } from '../campaign/runs.js';
import { scenarioArbitrary, type FaultKind } from './arbitraries.js';
import { scenarioSchema } from './schema.js';

const ALL_FAULTS: FaultKind[] = ['loseResponse', 'crash', 'slow', 'concurrency', 'kill', 'pause', 'clockOffset', 'instances', 'loseAllAnswers', 'modelNewId', 'modelReword', 'tenants', 'sameTitles', 'keyReuse', 'leaseRace', 'crashTakeover', 'keyReuseProbe', 'throttle', 'answer', 'longSpans', 'threeWorkers'];

/**
 * The generator builds scenarios complete instead of parsing them (a parse
 * per run was a sixth of generation). That is only sound while the object
 * it builds is exactly what the parse would return: valid, every default
 * filled in, keys in the schema's order (files are printed from it).
 */
function expectParsedEqual(arb: fc.Arbitrary<{ scenario: unknown }>, seed: number, runs: number): void {
  for (let i = 0; i < runs; i++) {
    const v = caseAt(arb, seed, i);
    const s = v.value.scenario;
    expect(JSON.stringify(scenarioSchema.parse(s))).toBe(JSON.stringify(s));
    // Shrink candidates go through the same map.
    let n = 0;
    for (const c of arb.shrink(v.value_, v.context)) {
      expect(JSON.stringify(scenarioSchema.parse(c.value.scenario))).toBe(JSON.stringify(c.value.scenario));
      if (++n >= 3) break;
    }
  }
}

describe('generated scenarios equal their parse', () => {
  it('for every claim\'s generator (and a few shrink candidates of each case)', () => {
    for (const claim of CLAIMS) expectParsedEqual(arbitraryFor(claim), 11, 150);
  });

  it('for every fault kind at once, on a built-in variant and on a user service', () => {
    expectParsedEqual(scenarioArbitrary({ variant: 'key_atomic', keySource: 'tool_call', faults: ALL_FAULTS, opsMax: 3 }), 5, 400);
    expectParsedEqual(scenarioArbitrary({ variant: 'naive', keySource: 'tool_call', faults: ALL_FAULTS, service: { module: './svc.ts', steps: ['claim', 'finish'], crashPoints: ['after-claim'] } }), 6, 400);
    // With the epoch a user's service's files carry (service.epochMs, in the schema's order).
    expectParsedEqual(scenarioArbitrary({ variant: 'naive', keySource: 'tool_call', faults: ALL_FAULTS, service: { module: './svc.ts', steps: ['claim', 'finish'], crashPoints: ['after-claim'], epochMs: 1767225600000 } }), 7, 200);
  });

  it('goes red when the built object differs from the parse (a missing default)', () => {
    const arb = scenarioArbitrary({ variant: 'key_atomic', keySource: 'tool_call', faults: ['slow'] }).map((c) => ({ ...c, scenario: { ...c.scenario, schedule: undefined } }));
    expect(() => expectParsedEqual(arb, 1, 1)).toThrow();
  });
});

describe('--faults narrows the space: a long span brings in no dimension that was left out', () => {
  it('without instances or clockOffset, no generated case has two instances or a skewed clock', () => {
    // A user who leaves out `instances` (a single-process service) must not
    // be shown a two-instance counterexample: the long clock-skew span used
    // to set two instances whatever the list said.
    const service = { module: './svc.ts', steps: ['claim', 'finish'], crashPoints: [] };
    for (const left of [['instances'], ['clockOffset']] as const) {
      const faults = (['loseResponse', 'slow', 'concurrency', 'pause', 'clockOffset', 'instances', 'longSpans'] as FaultKind[]).filter((f) => !left.includes(f as never));
      const arb = scenarioArbitrary({ variant: 'naive', keySource: 'tool_call', faults, service });
      for (let i = 0; i < 300; i++) {
        const s = caseAt(arb, 7, i).value.scenario;
        if (left[0] === 'instances') expect(s.service.instances, `case ${i}`).toBe(1);
        else expect(s.service.clockOffsetMs.every((x) => x === 0), `case ${i}: ${JSON.stringify(s.service.clockOffsetMs)}`).toBe(true);
      }
    }
  });
});
