// The handler's code that runs on in the turn where a helper it called
// reached a step — `Promise.race([charge(), timeout(2000)])` with charge()
// stepping at once — is the request's: its timers, clock and randomness are
// the run's (KernelClock.leaveAfterTurn). Found by a service written for a
// probe (2026-12): the timeout was a real timer, so the race's 503 never came
// and a service that charges twice held 500 runs; a variant that awaited the
// timer stopped as "awaited something outside the simulation".
import { describe, expect, it } from 'vitest';
import { runCli } from '../real/child.js';
import { tempDirs } from '../testing/temp-dirs.js';
import { loadService } from './load.js';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import type { ServiceDb } from './definition.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';

const tmp = tempDirs();
const MODULE = 'src/service/fixtures/late-step/race-stepped-first.ts';

describe('code after a call that reached a step, in the same turn, runs on the request\'s clock', () => {
  it('the timeout armed there fires in virtual time: the slow charge past it and the retry charge twice, and check finds it', async () => {
    const found = tmp('rs-after-step-');
    const r = await runCli(['check', '--service', MODULE, '--runs', '300', '--found', found]);
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(/exactly-one \(op1\): [2-9] charges/);
  }, 120_000);

  it('one slow request: the timer fires at 2001 ms, the 503 frees the key, the retry charges again; Date.now() and Math.random() there are the run\'s, the same in two runs', async () => {
    const def = await loadService(MODULE);
    const s = parseScenario(JSON.stringify({
      format: 'retrysim.scenario/2', name: 'slow past the timeout', seed: 3, service: { module: MODULE, epochMs: SIM_EPOCH_MS },
      client: { keySource: 'tool_call', maxAttempts: 2, timeoutMs: 5000 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
      faults: { slowMs: 2500, slowAtStep: 'charge' },
      operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
    }));
    const once = async () => {
      let rows: Array<{ armed_at: number; nonce: number }> = [];
      const r = await runScenario(s, { service: def, keepTrace: true, inspect: (db: ServiceDb) => { rows = db.prepare('SELECT armed_at, nonce FROM charges ORDER BY id').all() as typeof rows; } });
      return { rows, hash: r.result.traceHash, violations: r.violations.map((v) => v.invariant), fired: r.trace.filter((l) => /setTimeout callback/.test(l)).map((l) => l.trim().split(/\s+/)[0]) };
    };
    const a = await once();
    expect(a.violations).toEqual(['exactly-one']);
    expect(a.fired[0]).toBe('2001.000');
    // Armed at 1 ms of the run's clock (the epoch plus the first step's latency), not the machine's.
    expect(a.rows[0]!.armed_at).toBe(SIM_EPOCH_MS + 1);
    expect(a.rows).toHaveLength(2);
    expect(await once()).toEqual(a);
  });
});
