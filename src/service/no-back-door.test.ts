/**
 * docs/design.md invariant 7, no back door: the built-in tracker is one service
 * among others. Code outside src/tracker/ finds a built-in by name through
 * one door, src/tracker/builtin.ts, and sees only a ServiceDefinition; it
 * never reaches the tracker's steps (STEP_LABELS), its lease rule
 * (usesLease), its store, handler, strategies or instances. The checkers
 * judge effects through the service API.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

const ROOT = join(import.meta.dirname, '..');

/**
 * What code outside src/tracker/ may import from it: the door (builtin.ts),
 * and plumbing that is not the tracker's own — the fault counters every
 * host shares (faults.ts), the time-and-interleaving window (env.ts) and the
 * shape of an HTTP message (messages.ts, types only).
 */
const ALLOWED = /^import (type )?\{[^}]*\} from '[./]*\/?tracker\/(builtin|faults|env)\.js';$|^import type \{[^}]*\} from '[./]*\/?tracker\/messages\.js';$/;

/**
 * Files that still reach in, each for a reason outside this change; the list
 * may only shrink. Real mode's HTTP server builds its error bodies and its
 * real-time StepEnv with the tracker's helpers, the flakiness lab drives a
 * TrackerInstance directly (it studies only the built-in test), and the
 * stepper page reads the tracker's tables to draw its rows.
 */
const KNOWN: Readonly<Record<string, string>> = {
  'real/server.ts': "import { errorResponse, jsonResponse, type TrackerResponse } from '../tracker/messages.js';\nimport { realEnv } from '../tracker/real-env.js';",
  'real/flaky.ts': "import { TrackerInstance } from '../tracker/instance.js';\nimport { openStore } from '../tracker/store.js';\nimport { realEnv } from '../tracker/real-env.js';\nimport type { Variant } from '../tracker/strategy.js';",
  'report/html/stepper-data.ts': "import { storeOn, type Store } from '../../tracker/store.js';\nimport { unscopeKey } from '../../tracker/scope.js';",
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return p === join(ROOT, 'tracker') ? [] : sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.fixture.ts') ? [p] : [];
  });
}

/** Per file, its import lines that reach into src/tracker/ other than through the door. */
function backDoors(files: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of files) {
    // Imports may span lines; join each statement onto one line first.
    const statements = readFileSync(f, 'utf8').replace(/\{[^}]*\}/g, (m) => m.replace(/\s+/g, ' ')).split('\n');
    const bad = statements.filter((l) => /^(import|export) .* from '[./]*\/?tracker\//.test(l) && !ALLOWED.test(l));
    if (bad.length > 0) out[relative(ROOT, f).split('\\').join('/')] = bad.join('\n');
  }
  return out;
}

describe('no back door into the tracker', () => {
  const files = sources(ROOT).filter((f) => f !== join(ROOT, 'index.ts'));

  it('outside src/tracker/, a built-in is reached only by name through tracker/builtin.ts', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(backDoors(files)).toEqual(KNOWN);
  });

  it('the scan sees one: a loader that reads a variant\'s step list, a checker typed on the store, a re-export', () => {
    const dir = mkdtempSync(join(tmpdir(), 'retrysim-backdoor-'));
    try {
      const f = join(dir, 'checker.ts');
      writeFileSync(f, [
        "import type { OperationEnd } from '../checkers/invariants.js';",
        "import { builtinService } from '../tracker/builtin.js';",
        "import { STEP_LABELS, usesLease } from '../tracker/variants.js';",
        "import type { Store } from '../tracker/store.js';",
        "import {\n  trackerService,\n} from '../tracker/service.js';",
        "export { VARIANTS } from '../tracker/strategy.js';",
      ].join('\n'));
      expect(Object.values(backDoors([f]))[0]!.split('\n')).toHaveLength(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
