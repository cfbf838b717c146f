/**
 * Scenario files are a format, not an opaque string: the loader never
 * crashes on fuzzed or malformed input, every rejection names the bad path,
 * and parse ∘ print is the identity for every generated scenario.
 */
import { describe, expect } from 'vitest';
import { test } from '@fast-check/vitest';
import fc from 'fast-check';
import { parseScenario, printScenario, ScenarioError } from '../src/scenario/load.js';
import { scenarioArbitrary } from '../src/scenario/arbitraries.js';
import { HARNESS_FAULTS } from '../src/campaign/claims.js';
import { canonicalScenario } from '../src/scenario/canonical.js';

const valid = JSON.parse(printScenario(canonicalScenario('slow_takeover', { variant: 'key_atomic', keySource: 'tool_call' })));

/** Replaces the value at a random path of a JSON value. */
function mutate(v: unknown, path: number[], replacement: unknown): unknown {
  if (path.length === 0 || v === null || typeof v !== 'object') return replacement;
  const keys = Object.keys(v);
  if (keys.length === 0) return replacement;
  const k = keys[path[0]! % keys.length]!;
  const copy: any = Array.isArray(v) ? [...v] : { ...v };
  copy[k] = mutate((v as any)[k], path.slice(1), replacement);
  return copy;
}

describe('scenario loader under fuzzing', () => {
  test.prop([fc.string({ maxLength: 200 })], { numRuns: 500 })('arbitrary text never crashes the loader: it parses or throws ScenarioError', (text) => {
    try {
      parseScenario(text);
    } catch (e) {
      expect(e).toBeInstanceOf(ScenarioError);
    }
  });

  test.prop([fc.array(fc.nat(20), { maxLength: 5 }), fc.jsonValue()], { numRuns: 500 })(
    'a valid file with one value replaced is accepted or rejected with a named path',
    (path, replacement) => {
      const text = JSON.stringify(mutate(valid, path, replacement));
      try {
        parseScenario(text);
      } catch (e) {
        expect(e).toBeInstanceOf(ScenarioError);
        const issues = (e as ScenarioError).issues;
        expect(issues.length).toBeGreaterThan(0);
        // Only a broken top level may have the empty (root) path.
        for (const i of issues) expect(typeof i.path).toBe('string');
        if (path.length > 0 && typeof JSON.parse(text) === 'object' && JSON.parse(text) !== null && !Array.isArray(JSON.parse(text))) {
          expect(issues.some((i) => i.path !== '' || /expected a JSON object|format/.test(i.message))).toBe(true);
        }
      }
    },
  );

  test.prop([scenarioArbitrary({ variant: 'key_atomic', keySource: 'tool_call', faults: HARNESS_FAULTS })], { numRuns: 300 })(
    'round-trip: parse ∘ print is the identity for generated scenarios',
    ({ scenario }) => {
      expect(parseScenario(printScenario(scenario))).toEqual(scenario);
    },
  );
});
