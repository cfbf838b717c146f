// The hosted-app path and the ServiceDefinition path, held against each
// other on one service written both ways (examples/app-plain-http: app.ts as
// an unmodified node:http app, service.ts as a ServiceDefinition with the
// same commands as steps). The lead ran the per-case comparison over 10,000
// cases by hand (docs/idempotency-libraries.md); the test keeps it small.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadService } from '../service/load.js';
import { runServiceCampaign, serviceCaseArbitrary } from '../service/campaign.js';
import { runScenario } from '../scenario/run.js';
import { ListChoice } from '../sim/choice/list.js';

const APP = 'examples/app-plain-http/app.ts';
const SD = 'examples/app-plain-http/service.ts';

describe('a service written both ways: hosted app and ServiceDefinition agree', () => {
  it('the same generated cases give the same effects, violations and schedules', async () => {
    const app = await loadService(APP);
    const sd = await loadService(SD);
    const cases = fc.sample(serviceCaseArbitrary(app, APP), { numRuns: 80, seed: 11 });
    let failing = 0;
    for (const c of cases) {
      const a = await runScenario(c.scenario, { choices: new ListChoice(c.choices), service: app });
      const b = await runScenario(c.scenario, { choices: new ListChoice(c.choices), service: sd });
      expect({ reports: a.reports, violations: a.violations.map((v) => v.invariant), choices: a.result.choices.map((x) => x.of) })
        .toEqual({ reports: b.reports, violations: b.violations.map((v) => v.invariant), choices: b.result.choices.map((x) => x.of) });
      if (a.violations.length > 0) failing++;
    }
    // Both verdicts occur, or agreement would say little.
    expect(failing).toBeGreaterThan(0);
    expect(failing).toBeLessThan(cases.length);
  }, 60_000);

  it('the same campaign finds the same minimal counterexample on both paths', async () => {
    const [app, sd] = [await loadService(APP), await loadService(SD)];
    const a = await runServiceCampaign({ def: app, module: APP, runs: 300, seed: 4 });
    const b = await runServiceCampaign({ def: sd, module: SD, runs: 300, seed: 4 });
    expect(a.verdict).toBe('fails');
    expect(b.verdict).toBe('fails');
    expect(a.counterexample!.size).toEqual(b.counterexample!.size);
    const shape = (s: NonNullable<typeof a.counterexample>['scenario']) => ({ faults: s.faults, operations: s.operations, schedule: s.schedule, expect: s.expect });
    expect(shape(a.counterexample!.scenario)).toEqual(shape(b.counterexample!.scenario));
  }, 60_000);
});
