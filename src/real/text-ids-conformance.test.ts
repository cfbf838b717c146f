import { describe, expect, it } from 'vitest';
import { runServiceConformance } from './service-conformance.js';
import { loadService } from '../service/load.js';

// A UUID-keyed service against real `serve --service` processes, where
// randomUUID() is the machine's: the answer's text id is read and judged in
// both worlds. With a numeric-only reading of `{"id": …}` the bug below broke
// nothing in either world (a 201 without a number read as a refusal: both
// said "found" and "-"), and the two agreed about it.
describe('conformance --service on text ids', () => {
  it("a replay answered with a fresh randomUUID() breaks id-exists in the simulation and for real, after a lost answer only", async () => {
    const module = 'src/service/fixtures/uuid-orders-fresh-id-on-replay.ts';
    const cells = await runServiceConformance({ def: await loadService(module), module, columns: ['no_fault', 'lost_response'] });
    expect(cells.map((c) => [c.column, c.same, c.sim.effects, c.real.effects, c.sim.violations, c.real.violations, c.sim.eventually, c.real.eventually])).toEqual([
      ['no_fault', true, 1, 1, [], [], 'succeeded', 'succeeded'],
      ['lost_response', true, 1, 1, ['id-exists'], ['id-exists'], 'succeeded', 'succeeded'],
    ]);
  }, 60_000);
});
