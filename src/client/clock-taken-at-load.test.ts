// A retry client whose time budget reads a clock function taken when its
// module loads (performance.now.bind(performance), Date.now) sees the run's
// virtual time: it stops when its budget is spent and holds, where it failed
// `deadline` (no time passed for it, so it never stopped).
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const MODULE = 'src/client/fixtures/clock-taken-at-load.ts';

describe('a retry client with a clock function taken at module load', () => {
  for (const name of ['perf-now-taken-at-load', 'date-now-taken-at-load']) {
    it(`${name}: a server slower than its timeout on every attempt, it gives up within its deadline, and holds`, async () => {
      const r = await runMain(['check', '--client', MODULE, '--name', name, '--faults', 'slow', '--runs', '100', '--expect', 'holds', '--json', '--found', tmp('rs-clock-load-')]);
      expect(r.code, r.out + r.err).toBe(0);
      expect((JSON.parse(r.out) as { verdict: string }).verdict).toBe('holds');
    }, 120_000);
  }
});
