import type { BoundedPart, CampaignResult } from '../campaign/run.js';
import { judge } from '../campaign/judge.js';
import { coverageText, neverReached } from '../campaign/coverage.js';
import { exitCodeOf } from '../campaign/verdict.js';
import { textTable } from '../report/table.js';
import { firstFailureCell } from '../report/first-failure.js';
import { sizeText as sizeOf } from '../scenario/arbitraries.js';
import { shardJson } from './shard-args.js';

/** Runs per claim of the long (nightly / CI) campaign: what "to conclude" suggests when nothing else was asked. */
export const NIGHTLY_RUNS = 100_000;

/** What the report needs to know about the campaign besides its results. */
export interface ReportContext {
  seed: number;
  explore: 'random' | 'pct' | 'exhaustive';
  json: boolean;
  /** Wall time of the campaign (the slowest shard's, after a merge); omitted from the text when undefined. */
  wallMs?: number;
  /** One shard's report (`--shard I/N`): each row's `--json` says it covers the shard's runs only (exit 0 once it ran). */
  shard?: { index: number; count: number };
}

/** Runs; in exhaustive mode whether that was all of them, and the count without reduction when asked for; the bounded part beside a random campaign. */
function runsText(r: CampaignResult): string | number {
  const b = r.bounded;
  if (b !== undefined) {
    // A result with `complete` came from the exhaustive search (it failed, so no random campaign ran).
    const random = r.complete !== undefined ? '' : `${r.runs} random + `;
    return `${random}${b.schedules} schedules${b.complete ? ' (all)' : ''}`;
  }
  const all = r.complete === true && r.verdict === 'holds' ? ' (all)' : '';
  const u = r.reduction?.unreduced;
  if (u === undefined) return all ? `${r.runs}${all}` : r.runs;
  return `${r.runs}${all}; unreduced ${u}${r.reduction!.unreducedComplete || r.verdict === 'fails' ? '' : '+'}`;
}

function sizeText(r: CampaignResult): string {
  const s = r.counterexample?.size;
  return s ? sizeOf(s) : '-';
}

/** The bound a bounded-exhaustive part reached, in one sentence. */
export function boundText(b: BoundedPart): string {
  const pl = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  return `every schedule of ${pl(b.scenarios, 'small scenario')} (up to ${pl(b.operationsMax, 'operation')}, ${pl(b.workersMax, 'worker')} on a key, ${pl(b.faultsMax, 'fault')}): ${pl(b.schedules, 'schedule')}, ${b.complete ? 'complete' : `stopped by the limit of ${b.schedulesMax} per scenario`}`;
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
    asked: r.asked ?? null,
    ...(r.complete !== undefined ? { complete: r.complete } : {}),
    ...(r.reduction ? { blocked: r.reduction.blocked } : {}),
    ...(r.reduction?.unreduced !== undefined ? { schedulesUnreduced: r.reduction.unreduced, unreducedComplete: r.reduction.unreducedComplete } : {}),
    verdict: r.verdict,
    ...(r.shortfall ? { shortfall: r.shortfall } : {}),
    ...(r.bounded ? { bounded: r.bounded } : {}),
    firstFailureRun: r.firstFailureRun ?? null,
    firstFailureMs: r.firstFailureMs === undefined ? null : Math.round(r.firstFailureMs),
    counterexample: r.counterexample?.file ?? null,
    shrunkSize: r.counterexample?.size ?? null,
    violations: r.counterexample ? [...new Set(r.counterexample.violations.map((v) => v.invariant))] : [],
    minimised: r.counterexample?.minimised ?? null,
    ...(r.coverage ? { coverage: r.coverage, neverReached: neverReached(r.coverage).map((x) => x.id) } : {}),
    ...(r.error ? { error: r.error } : {}),
  };
}

/** The commands after an inconclusive row: one that reruns exactly what ran, and one that finishes the search. */
export function concludeLines(r: CampaignResult, c: Pick<ReportContext, 'seed' | 'explore'>): string[] {
  const base = `retrysim check --seed ${c.seed} --claim ${r.claim.id}`;
  const s = r.shortfall;
  if (c.explore === 'exhaustive' || s?.unit === 'schedules') {
    const limit = s?.asked ?? r.asked ?? 0;
    const lines = [`reproduce: ${base} --explore exhaustive --runs ${limit}`];
    lines.push(`to conclude: raise the schedule limit, e.g. ${base} --explore exhaustive --runs ${Math.max(10 * limit, 1000)}`);
    return lines;
  }
  const explore = c.explore === 'random' ? '' : ` --explore ${c.explore}`;
  const lines: string[] = [];
  // Run i depends only on (seed, claim, i): --runs <done> reruns exactly these runs, whatever the machine's speed.
  if (r.runs > 0) lines.push(`reproduce: ${base} --runs ${r.runs}${explore}`);
  lines.push(`to conclude: ${base} --runs ${s?.asked ?? r.asked ?? NIGHTLY_RUNS}${explore}`);
  return lines;
}

/**
 * Prints a campaign's results — the table, what every holding claim
 * covered (its bound, the situations it reached and those it never did),
 * and the reasons for every ✗ — or the `--json` array, and returns the exit
 * code (0, 1, or 4 when the only problem is an inconclusive search).
 * `check` and `merge` both print through here, so a merged run reads
 * exactly like an unsharded one, and the ✓ column, the JSON `ok` and the
 * exit code come from one {@link judge} per row.
 */
export function printResults(results: readonly CampaignResult[], c: ReportContext): number {
  const judged = results.map((r) => ({ r, j: judge(r) }));
  const code = exitCodeOf(judged.map((x) => x.j));
  if (c.json) {
    console.log(JSON.stringify(results.map((r) => ({ ...resultJson(r), ...shardJson(c.shard) }))));
    return code;
  }
  console.log('');
  console.log(textTable(['', 'variant / key source', 'claim', 'runs', 'verdict', 'first failure', c.explore === 'random' ? 'shrunk to' : 'counterexample size', 'counterexample'], judged.map(({ r, j }) => [
    j.ok ? '✓' : j.inconclusive ? '?' : '✗',
    `${r.claim.variant} / ${r.claim.keySource}`,
    r.claim.id.replace(`${r.claim.variant}-${r.claim.keySource}-`, '').replace(`${r.claim.variant}-`, ''),
    runsText(r),
    r.verdict,
    // A result with `complete` came from an exhaustive search: its first failure is a schedule.
    firstFailureCell(r, r.complete !== undefined),
    sizeText(r),
    r.counterexample?.file ?? '-',
  ])));
  console.log(`\n${results.length} claim${results.length === 1 ? '' : 's'}${c.wallMs === undefined ? '' : ` in ${(c.wallMs / 1000).toFixed(1)} s`}. ✓: as expected — "holds" for the fixes; "fails" for the known-wrong variants, on the invariant each names, with a minimal counterexample (their canaries show the faults fire). ?: inconclusive — no failure, but fewer runs or schedules than asked (exit 4).`);
  printCoverage(results);
  for (const { r, j } of judged) {
    if (j.ok) continue;
    console.log(`\n${j.inconclusive ? '?' : '✗'} ${r.claim.id}: ${r.claim.title}`);
    for (const w of j.why) console.log(`  ${w}`);
    for (const v of r.counterexample?.violations ?? []) console.log(`  ${v.invariant} (${v.op}): ${v.detail}`);
    console.log(`  seed ${c.seed} (claim seed ${r.seed})${r.firstFailureRun !== undefined ? `, first failing ${r.complete !== undefined ? 'schedule' : 'run'} #${r.firstFailureRun}` : ''}`);
    if (r.counterexample) console.log(`  replay: ${r.counterexample.replay}`);
    if (j.inconclusive) for (const l of concludeLines(r, c)) console.log(`  ${l}`);
  }
  return code;
}

/** What each claim without a failure covered: its searches, then the situations side by side, and what no run reached. */
function printCoverage(results: readonly CampaignResult[]): void {
  const covered = results.filter((r) => r.verdict !== 'fails' && r.coverage !== undefined);
  if (covered.length === 0) return;
  console.log('\nWhat each claim without a failure covered:');
  for (const r of covered) {
    const parts: string[] = [];
    if (r.bounded) parts.push(`bounded-exhaustive: ${boundText(r.bounded)}`);
    if (r.complete !== undefined) parts.push(`exhaustive: ${r.runs} schedules${r.complete ? ', complete' : ', stopped by the schedule limit'}`);
    else parts.push(`random: ${r.runs} generated scenario${r.runs === 1 ? '' : 's'}${r.asked !== undefined ? ` of ${r.asked} asked` : ''}`);
    console.log(`  ${r.claim.id} — ${parts.join('; ')}`);
    const never = neverReached(r.coverage!);
    console.log(never.length === 0 ? '    every situation of its fault space was reached' : `    never reached: ${never.map((x) => x.what).join('; ')}`);
  }
  console.log(`\nCoverage: runs that reached each situation (0 ✗: never; · not in that claim's fault space)`);
  console.log(coverageText(covered.map((r) => ({ name: r.claim.id, coverage: r.coverage! }))));
}
