import { describe, expect, it } from 'vitest';
import { minimiseCounterexample, notShownMinimal, simplifications } from './minimise.js';
import { runServiceCampaign } from '../service/campaign.js';
import { runScenario, type ScenarioRun } from '../scenario/run.js';
import type { Scenario } from '../scenario/schema.js';
import { exploreAll } from '../sim/explore/exhaustive.js';
import type { ServiceDefinition } from '../service/definition.js';
import checkThenInsert from '../../examples/payments-check-then-insert/service.js';
import twoTransactions from '../../examples/two-transactions/service.js';
import leaseWithoutFencing from '../../examples/lease-without-fencing/service.js';
import { buggyClient } from '../../examples/fetch-retry-client/client.js';
import fc from 'fast-check';
import { clientCaseArbitrary, recordClientCounterexample } from '../client/campaign.js';
import { ListChoice } from '../sim/choice/list.js';
import { scenarioSize, type FaultKind, type GeneratedCase } from '../scenario/arbitraries.js';
import { runClientScenario, type ClientRun, type RetryClient } from '../client/run.js';
import type { ChoiceSource } from '../sim/choice/source.js';

/**
 * Brute force, independent of the minimiser's own bounded search: every
 * schedule of `s` (no reduction), and the fewest preemptions among the
 * failing ones. Undefined when none fails; throws when the enumeration
 * could not finish (then nothing was shown).
 */
async function fewestFailingPreemptions(def: ServiceDefinition, s: Scenario, isHit: (r: ScenarioRun) => boolean): Promise<number | undefined> {
  return fewestBy((choices) => runScenario(s, { choices, service: def, hashTrace: false }), s.name, isHit);
}

async function fewestBy<R extends { result: ScenarioRun['result'] }>(run: (c: ChoiceSource) => Promise<R>, name: string, isHit: (r: R) => boolean): Promise<number | undefined> {
  let fewest: number | undefined;
  const e = await exploreAll(run, {
    schedulesMax: 20_000,
    keep: () => false,
    onSchedule: (x) => {
      if (!isHit(x.result)) return;
      const p = x.result.result.choices.filter((c) => c.preempted).length;
      fewest = fewest === undefined ? p : Math.min(fewest, p);
    },
  });
  if (!e.complete) throw new Error(`brute force incomplete for ${name}: ${e.schedules} schedules`);
  return fewest;
}

describe('minimised user-service counterexamples are minimal by brute force', () => {
  const cases: Array<[string, 'random' | 'exhaustive', ServiceDefinition, FaultKind[] | undefined]> = [
    ['payments-check-then-insert', 'random', checkThenInsert, undefined],
    ['payments-check-then-insert, pauses only', 'random', checkThenInsert, ['pause']],
    ['payments-check-then-insert, kills and concurrency', 'random', checkThenInsert, ['kill', 'concurrency']],
    ['payments-check-then-insert', 'exhaustive', checkThenInsert, undefined],
    ['two-transactions, crashes only', 'random', twoTransactions, ['crash']],
    ['two-transactions', 'random', twoTransactions, undefined],
    // A pause at a step plus a slow step: a counterexample of several faults and many attempts.
    ['lease-without-fencing, pauses, slow steps and concurrency', 'random', leaseWithoutFencing, ['pause', 'slow', 'concurrency']],
  ];
  it.each(cases)('%s (%s explore)', async (_name, explore, def, faults) => {
    const r = await runServiceCampaign({ def, module: `examples/${def.name}/service.ts`, runs: 2000, seed: 1, explore, ...(faults ? { faults } : {}) });
    expect(r.verdict).toBe('fails');
    const cx = r.counterexample!;
    // Where the fault space is pauses, the counterexample pins one to a step (the files the loader once refused).
    if (faults?.includes('pause')) expect(cx.scenario.faults.pause?.atStep).toBeDefined();
    // The minimiser claims minimality outright: nothing errored, nothing undecided.
    expect(cx.notMinimal).toEqual([]);
    const target = cx.scenario.expect.violations[0]!;
    const isHit = (x: ScenarioRun) => x.violations.some((v) => v.invariant === target);
    const p = cx.size.preemptions;
    // No schedule of the scenario with fewer preemptions fails.
    expect(await fewestFailingPreemptions(def, cx.scenario, isHit)).toBe(p);
    // No one-step simplification fails at all within the preemptions it has (fewer would be simpler still).
    for (const s of simplifications(cx.scenario)) {
      const fewest = await fewestFailingPreemptions(def, s.scenario, isHit);
      expect(fewest === undefined || fewest > p, `${s.what} still fails with ${fewest} preemption(s)`).toBe(true);
    }
  });
});

describe('minimised retry-client counterexamples are minimal by brute force', () => {
  // Raw generated cases, not fast-check-shrunk ones: the minimiser does all the work here.
  it.each([
    ['a key per attempt, lost answers only', buggyClient, ['loseResponse', 'loseAllAnswers']],
    ['a key per attempt, the whole client fault space', buggyClient, undefined],
  ] as Array<[string, RetryClient, FaultKind[] | undefined]>)('%s', async (_name, client, faults) => {
    let raw: GeneratedCase | undefined;
    for (const c of fc.sample(clientCaseArbitrary({}, faults), { numRuns: 200, seed: 7 })) {
      const run = await runClientScenario(c.scenario, client, { choices: new ListChoice(c.choices) });
      if (run.violations.length > 0 && scenarioSize(c.scenario, 0).faults + c.scenario.operations.length > 2) {
        raw = c;
        break;
      }
    }
    expect(raw).toBeDefined();
    const cx = await recordClientCounterexample(client, raw!, {});
    expect(cx.notMinimal).toEqual([]);
    const target = cx.scenario.expect.violations[0]!;
    const isHit = (x: ClientRun) => x.violations.some((v) => v.invariant === target);
    const p = cx.size.preemptions;
    expect(await fewestBy((choices) => runClientScenario(cx.scenario, client, { choices }), cx.scenario.name, isHit)).toBe(p);
    for (const s of simplifications(cx.scenario, true)) {
      const fewest = await fewestBy((choices) => runClientScenario(s.scenario, client, { choices }), s.what, isHit);
      expect(fewest === undefined || fewest > p, `${s.what} still fails with ${fewest} preemption(s)`).toBe(true);
    }
  });
});

describe('the minimiser says what it could not show', () => {
  const def = twoTransactions;
  const module = 'examples/two-transactions/service.ts';

  async function failingCase(faults?: FaultKind[]) {
    const r = await runServiceCampaign({ def, module, runs: 500, seed: 1, ...(faults ? { faults } : {}) });
    return r.counterexample!.scenario;
  }

  it('a candidate whose run throws is listed as errored, never taken as "does not fail"', async () => {
    const s0 = await failingCase();
    // Make the case bigger than it needs to be, so candidates exist, and make every run of a smaller case throw.
    const big: Scenario = { ...s0, faults: { ...s0.faults, slowMs: 7 }, schedule: [] };
    const first = await runScenario(big, { service: def });
    const choices = first.result.choices.map((c) => c.chosen);
    const isHit = (x: ScenarioRun) => x.violations.length > 0;
    expect(isHit(first)).toBe(true);
    const m = await minimiseCounterexample(big, choices, {
      isHit,
      run: async (s, c) => {
        if (s !== big) throw new Error('the database is locked');
        return runScenario(s, { choices: c, service: def });
      },
    });
    expect(m.removed).toEqual([]);
    expect(m.errored.length).toBeGreaterThan(0);
    expect(m.errored.join('\n')).toContain('slowMs (the database is locked)');
    expect(notShownMinimal(m).some((x) => x.startsWith('not shown necessary (could not be tried): slowMs'))).toBe(true);
  });

  it('a search of the case itself that throws leaves the preemption count not shown minimal', async () => {
    const s0 = await failingCase();
    const first = await runScenario(s0, { service: def });
    let n = 0;
    const m = await minimiseCounterexample(s0, first.result.choices.map((c) => c.chosen), {
      isHit: (x) => x.violations.length > 0,
      // The given case runs; every other run throws.
      run: async (s, c) => {
        if (n++ > 0) throw new Error('boom');
        return runScenario(s, { choices: c, service: def });
      },
    });
    expect(m.errored.some((x) => x.includes('boom'))).toBe(true);
    expect(notShownMinimal(m).length).toBeGreaterThan(0);
  });

  it('a spent budget lists every one-step simplification not tried', async () => {
    const s0 = await failingCase();
    const big: Scenario = { ...s0, faults: { ...s0.faults, slowMs: 7 }, operations: s0.operations.map((o) => ({ ...o, workers: 2 })), schedule: [] };
    const first = await runScenario(big, { service: def });
    expect(first.violations.length).toBeGreaterThan(0);
    const m = await minimiseCounterexample(big, first.result.choices.map((c) => c.chosen), {
      isHit: (x) => x.violations.length > 0,
      run: (s, c) => runScenario(s, { choices: c, service: def }),
      runsMax: 2,
      finalRunsMax: 0,
    });
    expect(m.undecided.length + m.errored.length).toBeGreaterThan(0);
    expect(notShownMinimal(m).length).toBeGreaterThan(0);
  });

  it('a front end\'s answers (throttle, answer) the failure does not need are removed, not left in a "minimal" case', async () => {
    const s0 = await failingCase(['crash']);
    // Two 429s and one 503 before the handler: the crash window still fails behind them.
    const big: Scenario = { ...s0, client: { ...s0.client, maxAttempts: 6 }, network: { ...s0.network, throttle: { count: 2, retryAfterS: 0 }, answer: { status: 503, count: 1 } }, schedule: [] };
    const first = await runScenario(big, { service: def });
    expect(first.violations.length).toBeGreaterThan(0);
    const m = await minimiseCounterexample(big, first.result.choices.map((c) => c.chosen), {
      isHit: (x) => x.violations.length > 0,
      run: (s, c) => runScenario(s, { choices: c, service: def }),
    });
    expect(m.scenario.network.throttle).toBeUndefined();
    expect(m.scenario.network.answer).toBeUndefined();
    expect(m.removed).toEqual(expect.arrayContaining(['network.throttle 2 → 1', 'network.throttle', 'network.answer']));
    expect(notShownMinimal(m)).toEqual([]);
  });
});

describe('a kill as the n-th answer leaves is brought forward', () => {
  /** A claim that never expires: a request killed after its claim leaves the key in progress for ever (no progress). */
  const stuck: ServiceDefinition = {
    name: 'claim-never-expires',
    tables: ['items', 'claims'],
    setup: (db) => db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, ref TEXT); CREATE TABLE claims (k TEXT PRIMARY KEY, answer TEXT)'),
    steps: ['claim', 'work'],
    operation: { path: '/items', body: (op) => JSON.stringify({ ref: op.runId, title: op.title }) },
    effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE ref = ?').pluck().all(op.runId) as number[] },
    progress: { settleMs: 1000, leased: true, query: (op) => ({ path: `/items/${op.runId}` }), found: () => false },
    async handle(req, sim) {
      if (req.method === 'GET') return { status: 404, body: '{}' };
      const k = req.headers['idempotency-key'] ?? '';
      await sim.step('claim');
      const row = sim.db.prepare('SELECT answer FROM claims WHERE k = ?').get(k) as { answer: string | null } | undefined;
      if (row) return row.answer === null ? { status: 409, body: '{}' } : { status: 201, body: row.answer };
      sim.db.prepare('INSERT INTO claims (k, answer) VALUES (?, NULL)').run(k);
      await sim.step('work');
      const id = Number(sim.db.prepare('INSERT INTO items (ref) VALUES (?)').run((JSON.parse(req.body) as { ref: string }).ref).lastInsertRowid);
      const answer = JSON.stringify({ id });
      sim.db.prepare('UPDATE claims SET answer = ? WHERE k = ?').run(answer, k);
      return { status: 201, body: answer };
    },
  };

  it('a kill at the 3rd answer that needs 3 workers to count up to it shrinks to the 1st answer and one worker', async () => {
    // As check --service once left it: the claimant slow at `work`, two twins answered 409, the kill at the 3rd answer.
    const big: Scenario = {
      format: 'retrysim.scenario/2', name: 'stuck', description: '', seed: 0,
      service: { module: 'claim-never-expires.ts', instances: 1, leaseMs: 5000, allowUnsafeLease: true, clockOffsetMs: [] },
      client: { keySource: 'tool_call', policy: 'bug-report-harness', maxAttempts: 2, timeoutMs: 100, model: { resubmits: 0, reword: false } },
      network: { latencyMeanMs: 1, latencySdMs: 0, loseResponses: 0 },
      faults: { loseResponseAfterCommit: 0, crashMidRequest: 0, slowMs: 196, slowAtStep: 'work', kill: { instance: 0, atAnswer: 3, restartAfterMs: 50 } },
      operations: [{ id: 'op1', runId: 'run-1', module: 'effect', title: 'effect 1', steps: '', workers: 3, startMs: 0, staggerMs: 0 }],
      schedule: [],
      expect: { violations: [] },
    };
    const isHit = (x: ScenarioRun) => x.violations.some((v) => v.invariant === 'progress');
    const first = await runScenario(big, { service: stuck, choices: new ListChoice([]) });
    expect(isHit(first), JSON.stringify(first.violations)).toBe(true);
    const m = await minimiseCounterexample(big, first.result.choices.map((c) => c.chosen), { isHit, run: (s, c) => runScenario(s, { choices: c, service: stuck }) });
    expect(m.scenario.faults.kill?.atAnswer).toBe(1);
    // One worker is enough: its own retry, timed out on the slow claimant, is the first answer.
    expect(m.scenario.operations[0]!.workers).toBe(1);
    expect(m.removed).toContain('kill at answer 3 → 2');
    expect(notShownMinimal(m)).toEqual([]);
  }, 60_000);
});
