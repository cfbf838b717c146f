import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadScenario, parseScenario, printScenario } from './load.js';
import { matchesExpect, runScenario } from './run.js';
import { MATRIX_COLUMNS, MATRIX_ROWS, canonicalFileName, canonicalScenario } from './canonical.js';

const root = join(import.meta.dirname, '..', '..');
const scenariosDir = join(root, 'scenarios');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.json') ? [p] : [];
  });
}

const files = walk(scenariosDir);

describe('every scenario file under scenarios/ replays to its expect', () => {
  it('there are canonical scenarios to replay', () => {
    expect(files.filter((f) => f.includes('/canonical/')).length).toBe(MATRIX_COLUMNS.length * MATRIX_ROWS.length);
  });

  it.each(files.map((f) => relative(root, f)))('%s', async (file) => {
    const s = loadScenario(join(root, file));
    const a = await runScenario(s, { strictReplay: true });
    const m = matchesExpect(s, a);
    expect(m.problems).toEqual([]);
    // A second replay checks for hidden nondeterminism.
    const b = await runScenario(s, { strictReplay: true });
    expect(b.result.traceHash).toBe(a.result.traceHash);
    // The file is in canonical print form (load ∘ save is the identity).
    expect(printScenario(s)).toBe(readFileSync(join(root, file), 'utf8'));
  });
});

describe('canonical scenario files', () => {
  it('match the generator in src/scenario/canonical.ts (regenerate: retrysim matrix --write-scenarios scenarios/canonical)', () => {
    for (const row of MATRIX_ROWS) {
      for (const col of MATRIX_COLUMNS) {
        const file = loadScenario(join(scenariosDir, 'canonical', canonicalFileName(col, row)));
        expect({ ...file, schedule: [] }).toEqual(canonicalScenario(col, row));
      }
    }
  });

  it('round-trip: parse ∘ print is the identity', () => {
    for (const f of files) {
      const s = loadScenario(f);
      expect(parseScenario(printScenario(s))).toEqual(s);
    }
  });
});
