import { loadService } from '../service/load.js';
import { registerService } from '../service/registry.js';
import { runServiceCampaign, type FoundBy, type ServiceCampaignResult } from '../service/campaign.js';
import type { ServiceDefinition } from '../service/definition.js';
import type { FaultKind } from '../scenario/arbitraries.js';
import type { KeySource } from '../harness/keys.js';

/**
 * How many of a holding app campaign's runs run again with the app's
 * modules loaded once per simulated process, unless told (`check
 * --module-probe-runs N`). A load costs 10–300 ms (Express and its
 * dependencies evaluated again) and Node never frees an ES module, so the
 * whole campaign cannot run that way; the first runs of the same seed and
 * fault space can. The module-level stores found so far fail at the first
 * or second run.
 */
export const MODULE_PROBE_RUNS = 50;

const MODULE_STATE_ADVICE = 'a store kept at module level (a Map in the app\'s file, a library\'s default in-memory store) is not shared by real processes; keep idempotency state in the store (env.redis)';

/** What the probe ran and found: `runs` the runs it was given (the first of the campaign's), `result` its campaign. */
export interface ModuleProbe {
  runs: number;
  result: ServiceCampaignResult;
  /** The app loaded once per simulated process, as the probe ran it (a page of its counterexample runs it so). */
  def?: ServiceDefinition;
}

/** Options of {@link runModuleProbe}: the campaign's own, so the probe's runs are its first ones. */
export interface ModuleProbeOptions {
  /** The app's module path (loaded again, once per simulated process). */
  module: string;
  /** The definition loaded once, filed again under the module when the probe is done (later runs and replays use it). */
  once: ServiceDefinition;
  runs: number;
  seed: number;
  keySource: KeySource;
  faults: readonly FaultKind[];
  explore: 'random' | 'pct';
  shrinkBudgetMs?: number;
  foundDir?: string;
  clockMs?: () => number;
  foundBy?: FoundBy;
}

/**
 * Runs the first `runs` runs of an app's campaign (the same seed, fault
 * space and key source) with its modules loaded once per simulated process,
 * as separate Node processes load them. A failure is minimised and written
 * as any campaign's, its file saying `service.moduleLoads: "per-process"`.
 * `check --app` runs it on a holding verdict, shard 1 of a sharded one (its
 * runs are shard 1's own: the first 64 run indices are), the vitest helper
 * on a passing property.
 */
export async function runModuleProbe(o: ModuleProbeOptions): Promise<ModuleProbe> {
  const own = await loadService(o.module, { perProcess: true });
  try {
    const result = await runServiceCampaign({
      def: own, module: o.module, keySource: o.keySource, faults: o.faults, explore: o.explore, runs: o.runs, seed: o.seed,
      ...(o.shrinkBudgetMs !== undefined ? { shrinkBudgetMs: o.shrinkBudgetMs } : {}), ...(o.foundDir !== undefined ? { foundDir: o.foundDir } : {}),
      ...(o.clockMs !== undefined ? { clockMs: o.clockMs } : {}), ...(o.foundBy !== undefined ? { foundBy: o.foundBy } : {}),
    });
    return { runs: o.runs, result, def: own };
  } finally {
    registerService(o.module, o.once);
  }
}

/** The invariants a counterexample breaks, for a sentence. */
function invariantsOf(p: ServiceCampaignResult): string {
  return p.counterexample ? [...new Set(p.counterexample.violations.map((x) => x.invariant))].join(', ') : 'an invariant';
}

/**
 * The one line of a verdict that held with the app's modules loaded once
 * and fails with one load per process (`shared`), or whose counterexample
 * did not reproduce in a fresh process because state carried over from one
 * run to the next (`carried`): check, merge and the vitest helper say it alike.
 */
export function moduleStateLine(app: string, how: 'shared' | 'carried', probe: ModuleProbe): string {
  const p = probe.result;
  const what = how === 'shared'
    ? `app '${app}' holds only because its simulated instances share module-level state`
    : `app '${app}' keeps state at module level, which carried over from one simulated run to the next while its modules were loaded once`;
  return `${what}: with its modules loaded once per simulated process, as two replicas or a restarted process load them, it fails ${invariantsOf(p)} (run ${p.firstFailureRun ?? p.runs} of ${probe.runs}) — ${MODULE_STATE_ADVICE}`;
}

/**
 * The line of an exhaustive search that held while its module probe failed,
 * where the probe's counterexample fails with the modules loaded once too:
 * the probe's runs are the random campaign's (the same seed and faults), a
 * space the small scenarios do not cover, so what it found is a failure the
 * search did not reach — not module-level state, which the line used to
 * blame (an app with no state outside its store read "holds only because
 * its simulated instances share module-level state").
 */
export function probeFoundLine(app: string, probe: ModuleProbe): string {
  const p = probe.result;
  return `app '${app}' fails: the module-state probe (the random campaign's runs 1–${probe.runs} of the same seed and faults, one module load per simulated process) found a failure the exhaustive search's small scenarios did not reach: ${invariantsOf(p)} (run ${p.firstFailureRun ?? p.runs} of ${probe.runs}); with the app's modules loaded once the same scenario fails too, so it is not module-level state — the random campaign (without --explore) searches that space`;
}

/** A result as a shard file or a report keeps it: without the counterexample's scenario (its file has it). */
export function withoutScenario(r: ServiceCampaignResult): ServiceCampaignResult {
  if (r.counterexample === undefined) return r;
  const { scenario: _s, ...cx } = r.counterexample;
  return { ...r, counterexample: cx as ServiceCampaignResult['counterexample'] };
}
