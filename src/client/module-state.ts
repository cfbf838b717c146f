import type { ClientCampaignResult } from './campaign.js';

/** What the lines read of a result: a campaign's, or a shard file's (its counterexample without the scenario). */
type Found = Pick<ClientCampaignResult, 'firstFailureRun' | 'runs'> & { counterexample?: { violations: ReadonlyArray<{ invariant: string }> } };

/** Whether the counterexample breaks a key check, which a counter kept at module level breaks per process. */
function keyBroken(p: Found): boolean {
  const broke = new Set(p.counterexample?.violations.map((x) => x.invariant) ?? []);
  return broke.has('key-reuse') || broke.has('stable-key');
}

/** What to do about the state a verdict found per process exposed, by the invariant it broke. */
function adviceOf(p: Found): string {
  return keyBroken(p)
    ? 'a key from a counter (or anything else) kept at module level starts again in every new or restarted client process; make the key per call (crypto.randomUUID()) or from the operation\'s own id, and send it on every retry of that operation' // real-time: allowed (advice text naming the API, not a call)
    : 'a retry budget, breaker or counter kept at module level is each client process\'s own and starts again in every new or restarted one; keep what one call needs inside run()';
}

/** The invariants a counterexample breaks, for a sentence. */
function invariantsOf(p: Found): string {
  return p.counterexample ? [...new Set(p.counterexample.violations.map((x) => x.invariant))].join(', ') : 'an invariant';
}

/**
 * The one line of a client verdict that held with its module loaded once
 * and fails with one load per simulated client process (`shared`), or whose
 * failing case did not fail again because state carried over from one run
 * to the next (`carried`): `check --client`, `merge` and the vitest helper
 * say it alike. `sample`: the per-process runs asked. A `carried` failure
 * of a check other than the key ones is the client's own (each call had its
 * own module): the line says so first, and gives no advice to move state
 * (before 2026-12 it said "keep what one call needs inside run()" to a
 * client that retried a 400 under a module-level breaker).
 */
export function clientModuleStateLine(name: string, how: 'shared' | 'carried', p: Found, sample: number): string {
  if (how === 'carried' && !keyBroken(p)) {
    // Each call ran from its own copy of the module: what failed is the client's own code, whatever the module
    // keeps. Module-level state only kept the once-loaded campaign's case from failing again; a breaker or
    // budget kept there is where it belongs (cockatiel's docs put one there), so no advice to move it.
    return `client '${name}' fails ${invariantsOf(p)} with its module loaded once per simulated client process, as separate client processes load it (run ${p.firstFailureRun ?? p.runs} of ${sample}): a failure of its own code — the campaign's first counterexample, with the module loaded once for every run, hung on state that earlier runs left at module level (a breaker, a budget, a cache; every run's clock starts again at its epoch) and did not reproduce in a fresh process`;
  }
  const what = how === 'shared'
    ? `client '${name}' holds only because its simulated calls share module-level state`
    : `client '${name}' keeps state at module level, which carried over from one simulated run to the next while its module was loaded once`;
  return `${what}: with its module loaded once per simulated client process, as two client processes or a restarted one load it, it fails ${invariantsOf(p)} (run ${p.firstFailureRun ?? p.runs} of ${sample}) — ${adviceOf(p)}`;
}
