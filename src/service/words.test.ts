import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadService } from './load.js';
import { runServiceCampaign, serviceCaseArbitrary, serviceFaults } from './campaign.js';
import { serviceSmallScenarios } from './small.js';
import { scenarioArbitrary } from '../scenario/arbitraries.js';
import { caseAt } from '../campaign/runs.js';
import { observeScenario } from '../report/html/stepper-data.js';
import { loadScenario } from '../scenario/load.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
/** The built-in tracker's bug-report vocabulary, which must not leak into a user's operations. */
const TRACKER_WORDS = /bug|pay|checkout|report/i;

describe("a user service's operations are in its own words, not the built-in tracker's bug reports", () => {
  it('generated (random and exhaustive) operations: module <noun>, title <noun> <n>, no steps', async () => {
    const module = 'examples/app-plain-http/app.ts';
    const def = await loadService(module);
    const arb = serviceCaseArbitrary(def, module, 'tool_call', serviceFaults(def));
    const ops = [...Array(40).keys()].flatMap((i) => caseAt(arb, 1, i).value.scenario.operations);
    ops.push(...serviceSmallScenarios(def, module, serviceFaults(def)).flatMap((s) => s.operations));
    expect(ops.length).toBeGreaterThan(40);
    for (const op of ops) {
      expect(op.module).toBe('order');
      expect(op.title).toMatch(/^order \d+$/);
      expect(op.steps).toBe('');
      expect(JSON.stringify(op)).not.toMatch(TRACKER_WORDS);
    }
    // Two tenants' first operations still coincide (same run, same title): the raw keys collide, as the fault means.
    const tenants = [...Array(200).keys()].map((i) => caseAt(arb, 1, i).value.scenario.operations).find((o) => o.some((x) => x.tenant === 'globex') && o.some((x) => x.tenant === undefined && x.runId === 'run-1'));
    expect(tenants).toBeDefined();
    const a = tenants!.find((x) => x.tenant === undefined && x.runId === 'run-1')!;
    const b = tenants!.find((x) => x.tenant === 'globex')!;
    expect([b.runId, b.title]).toEqual([a.runId, a.title]);
  });

  it('a service without a noun: module effect, title effect <n>', async () => {
    const module = 'examples/payments-check-then-insert/service.ts';
    const def = await loadService(module);
    expect(def.effects.noun).toBeUndefined();
    const ops = caseAt(serviceCaseArbitrary(def, module), 1, 0).value.scenario.operations;
    for (const o of ops) expect([o.module, o.title]).toEqual(['effect', expect.stringMatching(/^effect \d+$/)]);
  });

  it('the built-in variants keep their bug reports (their claims and checked-in files are drawn from them)', () => {
    const op = caseAt(scenarioArbitrary({ variant: 'key_split', keySource: 'tool_call', faults: ['concurrency'] }), 1, 0).value.scenario.operations[0]!;
    expect(op).toMatchObject({ module: 'checkout', title: 'Bug 1: pay fails', steps: 'press Pay' });
  });

  it('end to end: the counterexample check --app writes, and the requests and rows of its replay, carry the service\'s words only', async () => {
    const module = 'examples/app-plain-http/app.ts';
    const def = await loadService(module);
    const r = await runServiceCampaign({ def, module, runs: 20, seed: 1, foundDir: tmp('rs-words-') });
    expect(r.verdict).toBe('fails');
    const text = readFileSync(r.counterexample!.file!, 'utf8');
    expect(text).toContain('"title": "order 1"');
    // The stepper page's database rows (what the app stored from the request body): its words, no bug title.
    const { data } = await observeScenario(loadScenario(r.counterexample!.file!), {}, { strictReplay: true, service: def });
    const rows = JSON.stringify(data.dbStates.at(-1));
    expect(rows).toMatch(/order 1/);
    expect(rows).not.toMatch(/Bug \d|pay fails|press Pay/);
  }, 30_000);
});
