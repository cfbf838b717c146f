import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseScenario, printScenario, ScenarioError } from './load.js';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';

// `service.epochMs`: the wall-clock instant of virtual time 0 (docs/scenario-files.md).
// Written into files found for a user's service since 2026-12; absent, the 1970 clock of older files.

const tmp = tempDirs();
const base = {
  format: 'retrysim.scenario/2', name: 't', seed: 1, service: { module: 'svc.ts' },
  client: { keySource: 'tool_call' }, operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't' }], expect: {},
};
const withEpoch = (v: unknown) => JSON.stringify({ ...base, service: { module: 'svc.ts', epochMs: v } });

function issuesOf(text: string): Array<{ path: string; message: string }> {
  try {
    parseScenario(text);
  } catch (e) {
    expect(e).toBeInstanceOf(ScenarioError);
    return [...(e as ScenarioError).issues];
  }
  throw new Error('expected the scenario to be rejected');
}

describe('service.epochMs in a scenario file', () => {
  it('absent: no epoch field in the parse or the print (an old file prints as it was)', () => {
    const s = parseScenario(JSON.stringify(base));
    expect('epochMs' in s.service).toBe(false);
    expect(printScenario(s)).not.toContain('epochMs');
    for (const f of ['scenarios/canonical/lost_response/naive--none.json', 'scenarios/found/key_atomic-exactly-one-066b86b1.json']) {
      const text = readFileSync(f, 'utf8');
      expect(printScenario(parseScenario(text))).toBe(text);
    }
  });

  it('present: kept, right after clockOffsetMs, and parse ∘ print is the identity', () => {
    const s = parseScenario(withEpoch(SIM_EPOCH_MS));
    expect(s.service.epochMs).toBe(SIM_EPOCH_MS);
    const text = printScenario(s);
    expect(text).toMatch(/"clockOffsetMs": \[\],\n {4}"epochMs": 1767225600000\n/);
    expect(printScenario(parseScenario(text))).toBe(text);
    expect(parseScenario(withEpoch(0)).service.epochMs).toBe(0);
  });

  it.each([
    [-1, 'got a negative one'],
    [1.5, 'got a fraction'],
    ['"1767225600000"', 'got "1767225600000"'],
    [null, 'got null'],
    [1e300, 'at most 253402128000000 ms'],
  ])('refuses %s, naming the field and why', (v, why) => {
    const text = typeof v === 'string' ? withEpoch(0).replace('"epochMs":0', `"epochMs":${v}`) : withEpoch(v);
    const issues = issuesOf(text);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('service.epochMs');
    expect(issues[0]!.message).toContain(why);
  });

  it('replay of a file with a bad epochMs: exit 2, the field and the reason in one line, nothing run', async () => {
    const file = join(tmp('rs-epoch-field-'), 'bad.json');
    writeFileSync(file, JSON.stringify({ ...base, service: { variant: 'key_atomic', epochMs: -5 } }));
    for (const json of [[], ['--json']]) {
      const r = await runMain(['replay', file, ...json]);
      expect(r.code).toBe(2);
      expect(r.out).toBe('');
      const lines = r.err.split('\n').filter((l) => l.includes('epochMs'));
      expect(lines).toEqual(['  at service.epochMs: expected an instant at or after 1970-01-01 UTC (0 ms), got a negative one']);
    }
  });
});
