// A kill found at a step's n-th reach is tied to whatever made that reach.
// Found at the 2nd reach of `parse` — the second worker's, while the first
// slept past its claim — the counterexample stayed at 2 workers, a slow step
// and the kill, "minimal": removing the worker left the kill nothing to
// strike at, and no single step moves it. A pair of steps now does
// (src/campaign/minimise.ts, pairsOf): 1 worker and a kill at `book`.
import { describe, expect, it } from 'vitest';
import { minimiseAndWrite } from './campaign.js';
import { parseScenario } from '../scenario/load.js';
import { tempDirs } from '../testing/temp-dirs.js';
import pendingClaim from './fixtures/pending-claim.js';

const tmp = tempDirs();
const MODULE = 'src/service/fixtures/pending-claim.ts';

describe('the minimiser moves a kill that strikes at a step', () => {
  it('2 workers, slow at book, kill at the 2nd parse → 1 worker, the kill at book, no slow step: 1 fault', async () => {
    const scenario = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'pending claim, as found', seed: 0,
      service: { module: MODULE, instances: 1, leaseMs: 5000, allowUnsafeLease: true },
      client: { keySource: 'tool_call', policy: 'bug-report-harness', maxAttempts: 1, timeoutMs: 100 },
      network: { latencyMeanMs: 1, latencySdMs: 0, loseResponses: 0 },
      faults: { slowMs: 94, slowAtStep: 'book', kill: { instance: 0, atStep: 'parse', nth: 2, restartAfterMs: 2454 } },
      operations: [{ id: 'op1', runId: 'run-1', module: 'booking', title: 'booking 1', workers: 2, startMs: 1 }],
      expect: {},
    }));
    const cx = await minimiseAndWrite(pendingClaim, MODULE, { scenario, choices: [] }, 1, tmp('rs-kill-moves-'));
    expect(cx.violations.map((v) => v.invariant)).toContain('progress');
    expect(cx.scenario.operations.map((o) => o.workers)).toEqual([1]);
    expect(cx.scenario.faults.slowMs).toBe(0);
    expect(cx.scenario.faults.slowAtStep).toBeUndefined(); // no knob that does nothing
    expect(cx.scenario.faults.kill).toMatchObject({ atStep: 'book' });
    expect(cx.scenario.faults.kill?.nth).toBeUndefined();
    expect(cx.notMinimal).toEqual([]);
    expect(cx.removed.some((w) => /kill moved to the 1st reach of book/.test(w)), cx.removed.join('; ')).toBe(true);
  }, 120_000);
});
