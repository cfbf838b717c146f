import type { CampaignResult } from './run.js';
import { shortfallText } from './verdict.js';

/** Whether a claim's campaign came out as expected, and every reason it did not. */
export interface Judgement {
  ok: boolean;
  /** Empty when ok; otherwise one sentence per problem. */
  why: string[];
  /**
   * No failure, but fewer runs or schedules than asked: the only problem is
   * that the search did not finish (exit 4, not 1), whichever verdict the
   * claim expects.
   */
  inconclusive: boolean;
}

/**
 * The one verdict of a claim's row, shared by the table's ✓/✗, `--json` and
 * the exit code so they cannot disagree. A claim is as expected when its
 * verdict is the expected one, no exception escaped a run, a canary broke the
 * invariant it names, and its counterexample is minimal in the dimensions
 * the claim pins (or the search could not show a smaller one). A search
 * stopped short without a failure is inconclusive — never a ✓ (DESIGN
 * invariant 9).
 */
export function judge(r: CampaignResult): Judgement {
  const why: string[] = [];
  const c = r.claim;
  if (r.error) why.push(`an exception escaped a run: ${r.error}`);
  if (r.verdict === 'inconclusive') {
    why.push(r.shortfall ? shortfallText(r.shortfall) : `inconclusive: ${r.runs} runs`);
    return { ok: false, why, inconclusive: r.error === undefined };
  }
  if (r.verdict !== c.expected) why.push(`expected it to ${c.expected === 'holds' ? 'hold' : 'fail'}, but it ${r.verdict === 'holds' ? 'held' : 'failed'}`);
  const cx = r.counterexample;
  if (c.expected === 'fails' && cx) {
    const named = c.violation ?? 'exactly-one';
    if (!cx.violations.some((v) => v.invariant === named)) {
      why.push(`it must break ${named}, but the counterexample breaks ${[...new Set(cx.violations.map((v) => v.invariant))].join(', ') || 'nothing'}`);
    }
  }
  for (const p of cx?.notMinimal ?? []) why.push(`counterexample not minimal: ${p}`);
  return { ok: why.length === 0, why, inconclusive: false };
}
