/**
 * docs/design.md invariant 7, no back door: the simulation hosts the built-in
 * tracker through the public service API (src/tracker/service.ts) and
 * judges it through its declared effects. So nothing on the path that runs
 * and judges scenarios may reach into the tracker's own machinery — its
 * instances, its store, its handler or strategies — except by naming a
 * variant's ServiceDefinition (trackerService).
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const ROOT = join(import.meta.dirname, '..');
/** The run-and-judge path. */
const DIRS = ['scenario', 'service', 'checkers', 'campaign', 'net', 'sim', 'harness'];
/**
 * The tracker's internals: reaching them is the back door. (tracker/faults.ts
 * is not among them: it holds the fault counters every host shares.)
 */
const INTERNALS = /from '[./]*\/?tracker\/(instance|store|handler|strategies\/[^']*|reads|validate|fingerprint|scope)\.js'/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/** Import lines that reach the tracker's internals (type-only imports of shapes too: a checker typed on the Store is one). */
function backDoors(files: readonly string[]): string[] {
  return files.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.startsWith('import') && INTERNALS.test(l)).map((l) => `${relative(ROOT, f)}: ${l}`));
}

describe('no back door into the tracker on the run-and-judge path', () => {
  const files = DIRS.flatMap((d) => sources(join(ROOT, d)));

  it('the scenario runner, the service host, the checkers, the campaign, the network and the kernel import none of its internals', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(backDoors(files)).toEqual([]);
  });

  it('the scan sees one: a checker that reads the tracker store directly', () => {
    const dir = mkdtempSync(join(tmpdir(), 'retrysim-backdoor-'));
    try {
      const f = join(dir, 'checker.ts');
      writeFileSync(f, "import type { OperationEnd } from '../checkers/invariants.js';\nimport type { Store } from '../tracker/store.js';\n");
      expect(backDoors([f])).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
