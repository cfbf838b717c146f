import fc from 'fast-check';
import { loadService } from '../src/service/load.js';
import { serviceCaseArbitrary } from '../src/service/campaign.js';
import { runScenario, type ScenarioRun } from '../src/scenario/run.js';
import { ListChoice } from '../src/sim/choice/list.js';
import type { ServiceDefinition } from '../src/service/definition.js';

const clock = () => performance.now();
const verdictOf = (r: ScenarioRun) => JSON.stringify([r.reports, r.violations.map((v) => `${v.invariant}/${v.op}`)]);

/**
 * The hosted-app path's cost, side by side in one process: scenarios per
 * second of the standard campaign's cases on one service written both ways
 * (examples/app-plain-http: app.ts, an unmodified node:http app hosted
 * through light-my-request; service.ts, the same commands as a
 * ServiceDefinition), trace hashing off, best of three alternating rounds.
 * Every case must end the same on both paths, or the bench fails. The goal
 * is a ratio ≥ 0.3. Beside it, the Express + express-idempotency example for
 * scale (a framework and a library per request). `BENCH_APP_RUNS` sets the
 * case count (default 2000).
 */
export default async function appBench(): Promise<void> {
  const runs = Number(process.env.BENCH_APP_RUNS ?? 2000);
  const app = await loadService('examples/app-plain-http/app.ts');
  const sd = await loadService('examples/app-plain-http/service.ts');
  const cases = fc.sample(serviceCaseArbitrary(app, 'examples/app-plain-http/app.ts'), { numRuns: runs, seed: 1 });
  const scan = async (def: ServiceDefinition) => {
    const verdicts: string[] = [];
    const t0 = clock();
    for (const c of cases) verdicts.push(verdictOf(await runScenario(c.scenario, { choices: new ListChoice(c.choices), hashTrace: false, service: def })));
    return { perSec: runs / ((clock() - t0) / 1000), verdicts };
  };
  const best = { app: 0, sd: 0 };
  for (let round = 0; round < 3; round++) {
    const s = await scan(sd);
    const a = await scan(app);
    const differ = a.verdicts.findIndex((v, i) => v !== s.verdicts[i]);
    if (differ >= 0) throw new Error(`bench: case ${differ} ends differently as a hosted app (${a.verdicts[differ]}) and as a ServiceDefinition (${s.verdicts[differ]})`);
    best.app = Math.max(best.app, a.perSec);
    best.sd = Math.max(best.sd, s.perSec);
  }
  console.log(JSON.stringify({
    bench: 'app.hostedVsServiceDefinition',
    runs,
    hostedAppScenariosPerSec: Math.round(best.app),
    serviceDefinitionScenariosPerSec: Math.round(best.sd),
    ratio: +(best.app / best.sd).toFixed(3),
    goal: '>= 0.3',
    verdictsEqual: true,
  }));
  const express = await loadService('examples/app-express-idempotency/app.ts');
  const ecases = fc.sample(serviceCaseArbitrary(express, 'examples/app-express-idempotency/app.ts'), { numRuns: Math.max(1, Math.floor(runs / 4)), seed: 1 });
  const t0 = clock();
  for (const c of ecases) await runScenario(c.scenario, { choices: new ListChoice(c.choices), hashTrace: false, service: express });
  console.log(JSON.stringify({ bench: 'app.expressIdempotency', runs: ecases.length, scenariosPerSec: Math.round(ecases.length / ((clock() - t0) / 1000)) }));
}
