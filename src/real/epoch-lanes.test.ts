// Conformance's simulated columns and the flaky lab's virtual-time and
// simulation lanes run a user's service in the present (2026, as check
// --service does since service.epochMs), not in 1970: their other side is
// real processes on the machine's clock. Found from the packed tarball: a
// correct service that stores its claim time in unix seconds and reads 0
// as "unset" differed from itself in three conformance columns ("≠ no")
// and the flaky lab's simulation said 492 of 660 schedules fail, where
// check --service, the real processes and the wall-clock lane all hold.
import { describe, expect, it } from 'vitest';
import { serviceColumns } from './service-conformance.js';
import { labScenario, runSimulated, runVirtualTime } from './flaky.js';
import { clientLabScenario } from './flaky-client.js';
import { runScenario } from '../scenario/run.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';
import { loadService } from '../service/load.js';

const MODULE = 'src/service/fixtures/epoch/seconds-claim.ts';

describe('a user service on the present clock outside check --service', () => {
  it('conformance: every simulated column carries the epoch, and the concurrent columns hold as the real processes do', async () => {
    const def = await loadService(MODULE);
    const cols = serviceColumns(def, MODULE);
    for (const c of cols) expect(c.scenario.service.epochMs, c.name).toBe(SIM_EPOCH_MS);
    for (const name of ['concurrent_duplicate', 'two_instances', 'kill_at:order']) {
      const col = cols.find((c) => c.name === name)!;
      const run = await runScenario(col.scenario, { service: def });
      expect({ name, violations: run.violations.map((v) => v.invariant) }).toEqual({ name, violations: [] });
      // A claim left by the request killed before its order stays (as in production, where it is cleared by hand): no order; the duplicates get one.
      expect({ name, orders: run.reports.op1 ?? 0 }).toEqual({ name, orders: name === 'kill_at:order' ? 0 : 1 });
    }
  });

  it('flaky lab: the simulation and the virtual-time lane hold on the correct service', async () => {
    const def = await loadService(MODULE);
    const o = { service: { def, module: MODULE }, runs: 6, variant: 'key_split' as const, slowMs: 2, staggerMaxMs: 3, seed: 1, schedulesMax: 300 };
    expect(labScenario(o, 0).service.epochMs).toBe(SIM_EPOCH_MS);
    const sim = await runSimulated(o);
    expect(sim.schedules).toBeGreaterThan(0);
    expect({ failing: sim.failing, byInvariant: sim.byInvariant }).toEqual({ failing: 0, byInvariant: {} });
    const virtual = await runVirtualTime(o);
    expect(virtual.perRun.map((r) => r.reports)).toEqual(Array(6).fill(1));
    expect(virtual.failures).toBe(0);
  });

  it('flaky --client --service: the lab scenario carries the epoch, as check --client --service writes it', async () => {
    const def = await loadService(MODULE);
    const o = { service: { def, module: MODULE }, client: { name: 'c', run: async () => undefined }, clientModule: 'c.ts', runs: 1, variant: 'key_atomic' as const, slowMs: 2, spreadMs: 3, seed: 1, schedulesMax: 10 };
    expect(clientLabScenario(o as unknown as Parameters<typeof clientLabScenario>[0], 2).service.epochMs).toBe(SIM_EPOCH_MS);
  });
});
