// A plain service that answers 202 and writes its effect from a timer it
// does not await: the simulation fires that timer before judging, and the
// real side read the file as soon as no request was in flight — before the
// timer wrote it. Found from the packed tarball: conformance reported
// "sim 1 export(s), real 0 [exactly-one, id-exists]" in four columns of a
// service that had no such difference. `serve` now counts a handler's
// pending timers with its background work, and the real run waits for them.
import { describe, expect, it } from 'vitest';
import { runServiceConformance } from './service-conformance.js';
import { loadService } from '../service/load.js';

describe('conformance --service: work a handler deferred to a timer', () => {
  it('is read once done, in both worlds', async () => {
    const module = 'src/real/fixtures/accepted-later.ts';
    const cells = await runServiceConformance({ def: await loadService(module), module, columns: ['no_fault', 'concurrent_duplicate', 'two_instances'] });
    expect(cells.map((c) => [c.column, c.sim.effects, c.real.effects, c.real.violations, c.real.unsettled])).toEqual([
      ['no_fault', 1, 1, [], []],
      ['concurrent_duplicate', 1, 1, [], []],
      ['two_instances', 1, 1, [], []],
    ]);
  }, 120_000);
});
