import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ServiceDefinition } from './definition.js';
import { commonJsTs, unwrapCommonJs } from './load.js';
import { validateDefinition } from './validate.js';
import { awaitAsyncSetup } from './async-setup.js';
import { isHostedApp } from '../app/define.js';
import { importFresh } from '../app/per-process.js';
import { loadingAt } from '../sim/load-clock.js';
import { SIM_EPOCH_MS } from '../sim/epoch.js';

/**
 * A copy of a user's service module loaded afresh, with every module it
 * imports (its libraries too), as a new process loads it: what a library
 * keeps at module level — nanoid's random pool, uuid's v7 clock state,
 * a `monotonicFactory()` of ulid's — starts as it does when the file is
 * replayed. A campaign loads the module once, so that state carries over
 * from run to run, and the ids a counterexample's last run minted in the
 * campaign were not the ids its file replays to: `check`'s table, the
 * file's description and its `--html` page named ids `retrysim replay`
 * never showed (until 2026-12). The counterexample's last run and its page
 * run on such a copy (src/service/campaign.ts, src/cli/check-service.ts).
 * Undefined for a hosted app (its modules load per process in a way of
 * their own), a module that is not a file, or one that does not load again
 * (the campaign's copy is used, as before).
 */
export async function freshServiceCopy(def: ServiceDefinition, module: string): Promise<ServiceDefinition | undefined> {
  if (isHostedApp(def)) return undefined;
  const abs = resolve(module);
  if (!existsSync(abs)) return undefined;
  try {
    // Its top level reads the simulation's epoch, as loadService's does (src/sim/load-clock.ts).
    const mod = unwrapCommonJs(await loadingAt(SIM_EPOCH_MS, () => importFresh(abs, commonJsTs(abs))));
    const value = mod.default ?? mod.service;
    if (value === undefined) return undefined;
    const def = validateDefinition(value, module);
    // Its own `async setup`, awaited as loadService awaits the campaign's (src/service/async-setup.ts).
    await awaitAsyncSetup(def, (f) => loadingAt(SIM_EPOCH_MS, f));
    return def;
  } catch {
    return undefined;
  }
}
