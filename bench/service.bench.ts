import { claimById } from '../src/campaign/claims.js';
import { arbitraryFor } from '../src/campaign/run.js';
import { caseAt } from '../src/campaign/runs.js';
import { runScenario, type RunOptions, type ScenarioRun } from '../src/scenario/run.js';
import { ListChoice } from '../src/sim/choice/list.js';
import { loadService } from '../src/service/load.js';
import { runServiceCampaign } from '../src/service/campaign.js';
import { runPrePort } from './pre-port/run.js';
import { openStore } from '../src/tracker/store.js';

const clock = () => performance.now();

/** What a campaign scan needs from a run: reports and the invariants broken. */
const verdictOf = (r: ScenarioRun) => JSON.stringify([r.reports, r.violations.map((v) => `${v.invariant}/${v.op}`)]);

/**
 * The service API's cost, side by side in one process: scenarios per second
 * of the key_atomic campaign's scan (run i of claim key_atomic-tool_call-holds,
 * as `retrysim check` generates and runs it, trace hashing off) through the
 * service API — the built-in variant ported onto it, which is how every run
 * goes now — next to the pre-port path (bench/pre-port/run.ts: TrackerInstance
 * on its own Store, the tracker-table checker), on the same cases. Rounds
 * alternate and the best of three is kept for each (warm-up and noise); the
 * goal is a ratio ≥ 0.8. Each case's verdict must agree on both paths, or
 * the bench fails. Beside it, examples/payments-atomic (a user's service of
 * the same shape) under the standard fault space, for scale.
 */
export default async function serviceBench(): Promise<void> {
  const runs = 3000;
  const claim = claimById('key_atomic-tool_call-holds');
  const arb = arbitraryFor(claim);
  const cases = Array.from({ length: runs }, (_, i) => caseAt(arb, 3, i).value);
  const scan = async (run: (c: (typeof cases)[number], o: RunOptions) => Promise<ScenarioRun>) => {
    const verdicts: string[] = [];
    const t0 = clock();
    for (const c of cases) verdicts.push(verdictOf(await run(c, { choices: new ListChoice(c.choices), hashTrace: false })));
    return { perSec: runs / ((clock() - t0) / 1000), verdicts };
  };
  const store = openStore(':memory:');
  const best = { api: 0, prePort: 0 };
  for (let round = 0; round < 3; round++) {
    const pre = await scan((c, o) => runPrePort(c.scenario, { ...o, store }));
    const api = await scan((c, o) => runScenario(c.scenario, o));
    const differ = api.verdicts.findIndex((v, i) => v !== pre.verdicts[i]);
    if (differ >= 0) throw new Error(`bench: case ${differ} ends differently through the service API (${api.verdicts[differ]}) and the pre-port path (${pre.verdicts[differ]})`);
    best.prePort = Math.max(best.prePort, pre.perSec);
    best.api = Math.max(best.api, api.perSec);
  }
  store.close();
  console.log(JSON.stringify({
    bench: 'service.apiOverhead',
    runs,
    keyAtomicViaServiceApiScenariosPerSec: Math.round(best.api),
    keyAtomicPrePortScenariosPerSec: Math.round(best.prePort),
    ratio: +(best.api / best.prePort).toFixed(3),
    goal: '>= 0.8',
    verdictsEqual: true,
  }));
  const def = await loadService('examples/payments-atomic/service.ts');
  const t0 = clock();
  const a = await runServiceCampaign({ def, module: 'examples/payments-atomic/service.ts', runs, seed: 3 });
  if (a.verdict !== 'holds') throw new Error(`bench: payments-atomic should hold, got ${a.verdict}`);
  console.log(JSON.stringify({ bench: 'service.paymentsAtomic', runs: a.runs, scenariosPerSec: Math.round(a.runs / ((clock() - t0) / 1000)) }));
}
