import { inProgressResponse, keyReusedResponse, replayResponse, type TrackerResponse } from '../messages.js';
import { keyRow, reads, writes } from '../footprints.js';
import type { StrategyContext, WriteRequest, WriteStrategy } from '../strategy.js';
import { KeyAtomicStrategy } from './key-atomic.js';

/**
 * `key_atomic_racy_claim`: key_atomic whose claim is check-then-act — the
 * key is read in one step and the placeholder written (`INSERT OR REPLACE`)
 * in a later one, as code does that reads with one statement and upserts
 * with another outside a transaction. Everything after the claim is
 * key_atomic's own (fenced finish included).
 *
 * The known-wrong variant for the claim's atomicity: if another request
 * claims *and finishes* between this request's read and its write, the
 * upsert turns the finished key back into an in-progress placeholder with
 * fence 1, the fenced finish then matches, and a second report commits. One
 * preemption (right after the read) is enough; no fault is needed.
 *
 * Steps: `claim` → `claim-write` → `process` → `finish` → `respond`.
 */
export class KeyAtomicRacyClaimStrategy implements WriteStrategy {
  readonly variant = 'key_atomic_racy_claim' as const;
  readonly stepLabels = ['claim', 'claim-write', 'process', 'finish', 'respond'] as const;
  private readonly rest = new KeyAtomicStrategy(true);

  async write(req: WriteRequest, ctx: StrategyContext): Promise<TrackerResponse> {
    const scoped = req.scopedKey;
    if (scoped === null) return this.rest.write(req, ctx);
    await ctx.step('claim', reads(keyRow(scoped)));
    const row = ctx.store.getKeyRow(scoped); // the check ...
    if (row && row.fingerprint !== req.fingerprint) return keyReusedResponse();
    if (row && row.status === 'done') return replayResponse(row.response_code ?? 500, row.response_body ?? '');
    if (row && ctx.nowMs() - (row.locked_at ?? 0) < ctx.leaseMs) return inProgressResponse();
    const fence = (row?.fence ?? 0) + 1;
    await ctx.step('claim-write', writes(keyRow(scoped)));
    ctx.store.upsertPlaceholder(scoped, req.fingerprint, ctx.nowMs(), fence); // ... then the act, on a stale read
    return this.rest.afterClaim(req, ctx, fence);
  }

  restart(): void {
    // All state is in SQLite.
  }
}
