/**
 * A counterexample replayed with the module fixed: when the fix takes other
 * steps the replay diverges (exit 3) and says a fixed module cannot be judged
 * so; when it takes the same steps the run goes through, no longer breaks the
 * invariant, and `expect` is not met (exit 1). That second case printed
 * "invariants: all hold" and then "expect: NOT met" and nothing else (found
 * by a newcomer pass on a service of their own fixed in place), which reads
 * as the fix having failed. Now it says what changed and what to run.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

/** payments-check-then-insert with the key looked up again inside the charge's transaction: the same steps, no second payment. */
function fixedCopy(dir: string): string {
  const src = readFileSync('examples/payments-check-then-insert/service.ts', 'utf8');
  const open = 'const response = sim.db.transaction(() => {';
  expect(src).toContain(open);
  const fixed = src.replace(open, `${open}
      const again = scoped === undefined ? undefined : (sim.db.prepare('SELECT response FROM idempotency_keys WHERE key = ?').pluck().get(scoped) as string | undefined);
      if (again !== undefined) return again;`);
  const file = join(dir, 'fixed.ts');
  writeFileSync(file, fixed);
  return file;
}

describe('replay with a fixed module that takes the same steps', () => {
  it('exit 1, and a line saying the invariant no longer breaks here and to run check again', async () => {
    const d = tmp('rs-replay-fixed-');
    const made = await runMain(['check', '--service', 'examples/payments-check-then-insert/service.ts', '--runs', '50', '--found', d, '--json']);
    const file = (JSON.parse(made.out) as { counterexample: string }).counterexample;
    const module = fixedCopy(d);
    const r = await runMain(['replay', '--service', module, file]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/invariants: all hold/);
    expect(r.out).toContain(`expect: NOT met\n  operation op1: expected 2 effects, got 1\n  expected violations [exactly-one], got []\n  it no longer breaks exactly-one here: if ${module} is a fix, it holds on this one case; run check on it again to know whether it holds on the others`);
  }, 120_000);

  it('the file replayed with its own module says nothing of the kind', async () => {
    const d = tmp('rs-replay-fixed-');
    const made = await runMain(['check', '--service', 'examples/payments-check-then-insert/service.ts', '--runs', '50', '--found', d, '--json']);
    const file = (JSON.parse(made.out) as { counterexample: string }).counterexample;
    const r = await runMain(['replay', file]);
    expect(r.code).toBe(0);
    expect(r.out).not.toMatch(/no longer breaks/);
  }, 120_000);
});
