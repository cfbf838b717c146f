import type { CampaignResult } from '../campaign/run.js';
import { judge } from '../campaign/judge.js';
import { textTable } from '../report/table.js';

/** What the report needs to know about the campaign besides its results. */
export interface ReportContext {
  seed: number;
  explore: 'random' | 'pct' | 'exhaustive';
  json: boolean;
  /** Wall time of the campaign (the slowest shard's, after a merge); omitted from the text when undefined. */
  wallMs?: number;
}

/** Runs; in exhaustive mode whether that was all of them, and the count without reduction when asked for. */
function runsText(r: CampaignResult): string | number {
  const all = r.complete === true && r.verdict === 'holds' ? ' (all)' : '';
  const u = r.reduction?.unreduced;
  if (u === undefined) return all ? `${r.runs}${all}` : r.runs;
  return `${r.runs}${all}; unreduced ${u}${r.reduction!.unreducedComplete || r.verdict === 'fails' ? '' : '+'}`;
}

function sizeText(r: CampaignResult): string {
  const s = r.counterexample?.size;
  if (!s) return '-';
  return `${s.operations} op, ${s.workers} worker${s.workers === 1 ? '' : 's'}, ${s.faults} fault${s.faults === 1 ? '' : 's'}, ${s.attempts} attempts, ${s.preemptions} preemption${s.preemptions === 1 ? '' : 's'}${s.instances > 1 ? `, ${s.instances} instances` : ''}`;
}

/** A result as `--json` prints it (one element of the array). */
export function resultJson(r: CampaignResult): Record<string, unknown> {
  const j = judge(r);
  return {
    claim: r.claim.id,
    variant: r.claim.variant,
    keySource: r.claim.keySource,
    expected: r.claim.expected,
    invariant: r.claim.expected === 'fails' ? (r.claim.violation ?? 'exactly-one') : null,
    ok: j.ok,
    why: j.why,
    runs: r.runs,
    ...(r.complete !== undefined ? { complete: r.complete } : {}),
    ...(r.reduction ? { blocked: r.reduction.blocked } : {}),
    ...(r.reduction?.unreduced !== undefined ? { schedulesUnreduced: r.reduction.unreduced, unreducedComplete: r.reduction.unreducedComplete } : {}),
    verdict: r.verdict,
    firstFailureRun: r.firstFailureRun ?? null,
    firstFailureMs: r.firstFailureMs === undefined ? null : Math.round(r.firstFailureMs),
    counterexample: r.counterexample?.file ?? null,
    shrunkSize: r.counterexample?.size ?? null,
    violations: r.counterexample ? [...new Set(r.counterexample.violations.map((v) => v.invariant))] : [],
    minimised: r.counterexample?.minimised ?? null,
    ...(r.error ? { error: r.error } : {}),
  };
}

/**
 * Prints a campaign's results — the table and the reasons for every ✗, or
 * the `--json` array — and returns the exit code. `check` and `merge` both
 * print through here, so a merged run reads exactly like an unsharded one,
 * and the ✓ column, the JSON `ok` and the exit code come from one
 * {@link judge} per row.
 */
export function printResults(results: readonly CampaignResult[], c: ReportContext): number {
  const judged = results.map((r) => ({ r, j: judge(r) }));
  const ok = judged.every((x) => x.j.ok);
  if (c.json) {
    console.log(JSON.stringify(results.map(resultJson)));
    return ok ? 0 : 1;
  }
  console.log('');
  console.log(textTable(['', 'variant / key source', 'claim', 'runs', 'verdict', 'first failure', c.explore === 'random' ? 'shrunk to' : 'counterexample size', 'counterexample'], judged.map(({ r, j }) => [
    j.ok ? '✓' : '✗',
    `${r.claim.variant} / ${r.claim.keySource}`,
    r.claim.id.replace(`${r.claim.variant}-${r.claim.keySource}-`, '').replace(`${r.claim.variant}-`, ''),
    runsText(r),
    r.verdict,
    r.firstFailureRun === undefined ? '-' : `run ${r.firstFailureRun}${r.firstFailureMs === undefined ? '' : `, ${Math.round(r.firstFailureMs)} ms`}`,
    sizeText(r),
    r.counterexample?.file ?? '-',
  ])));
  console.log(`\n${results.length} claim${results.length === 1 ? '' : 's'}${c.wallMs === undefined ? '' : ` in ${(c.wallMs / 1000).toFixed(1)} s`}. ✓: as expected — "holds" for the fixes; "fails" for the known-wrong variants, on the invariant each names, with a minimal counterexample (their canaries show the faults fire).`);
  for (const { r, j } of judged) {
    if (j.ok) continue;
    console.log(`\n✗ ${r.claim.id}: ${r.claim.title}`);
    for (const w of j.why) console.log(`  ${w}`);
    for (const v of r.counterexample?.violations ?? []) console.log(`  ${v.invariant} (${v.op}): ${v.detail}`);
    console.log(`  seed ${c.seed} (claim seed ${r.seed})${r.firstFailureRun !== undefined ? `, first failing run #${r.firstFailureRun}` : ''}`);
    if (r.counterexample) console.log(`  replay: ${r.counterexample.replay}`);
  }
  return ok ? 0 : 1;
}
