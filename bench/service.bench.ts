import { claimById } from '../src/campaign/claims.js';
import { runCampaign } from '../src/campaign/run.js';
import { loadService } from '../src/service/load.js';
import { runServiceCampaign } from '../src/service/campaign.js';

const clock = () => performance.now();

/**
 * The service API's cost, side by side in one run: generated scenarios per
 * second of the built-in key_atomic campaign (today's path) and of
 * examples/payments-atomic (a claim/charge/finish service of the same
 * shape, written against the public API) under the standard fault space.
 * Not the same strategy line for line — until the built-in variants are
 * ported onto the API, this is the nearest honest comparison. Each is run
 * twice, alternating, and the better figure kept (warm-up and noise).
 */
export default async function serviceBench(): Promise<void> {
  const runs = 4000;
  const def = await loadService('examples/payments-atomic/service.ts');
  const best = { builtin: 0, api: 0 };
  for (let round = 0; round < 2; round++) {
    let t0 = clock();
    const b = await runCampaign({ claim: claimById('key_atomic-tool_call-holds'), runs, seed: 3 });
    best.builtin = Math.max(best.builtin, b.runs / ((clock() - t0) / 1000));
    t0 = clock();
    const a = await runServiceCampaign({ def, module: 'examples/payments-atomic/service.ts', runs, seed: 3 });
    best.api = Math.max(best.api, a.runs / ((clock() - t0) / 1000));
    if (b.verdict !== 'holds' || a.verdict !== 'holds') throw new Error(`bench: expected both to hold, got ${b.verdict} / ${a.verdict}`);
  }
  console.log(JSON.stringify({
    bench: 'service.apiOverhead',
    runs,
    builtinKeyAtomicScenariosPerSec: Math.round(best.builtin),
    serviceApiPaymentsAtomicScenariosPerSec: Math.round(best.api),
    ratio: +(best.api / best.builtin).toFixed(3),
    note: 'payments-atomic via the service API vs built-in key_atomic; not the ported key_atomic',
  }));
}
