import {
  createdBody,
  createdResponse,
  inProgressResponse,
  keyReusedResponse,
  replayResponse,
  type TrackerResponse,
} from '../messages.js';
import { TOUCHES_NOTHING } from '../../sim/footprint.js';
import { keyRow, REPORTS, writes } from '../footprints.js';
import type { KeyRow, Store } from '../store.js';
import type { StrategyContext, WriteRequest, WriteStrategy } from '../strategy.js';
import { DEFAULT_TENANT, type ReportInput } from '../validate.js';

/** Outcome of the claim transaction, as a value. */
export type ClaimResult =
  | { kind: 'claimed'; fence: number }
  | { kind: 'replay'; row: KeyRow }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

/** Outcome of the finish transaction, as a value. */
export type FinishResult = { kind: 'committed'; reportId: number } | { kind: 'lost'; row: KeyRow | undefined };

/**
 * Which guard of key_atomic a known-wrong variant breaks (SPEC §5: each
 * guard has a canary that must break a named invariant). All off is
 * key_atomic itself. Each is one small edit of the code below.
 */
export interface KeyAtomicGuards {
  /** The lease never expires: an in-progress key is never taken over. */
  noExpiry?: boolean;
  /** Take over once half the lease has passed, not the whole lease. */
  earlyTakeover?: boolean;
  /** The finish UPDATE keeps `status = 'in_progress'` but drops `fence = ?`. */
  unfencedFinish?: boolean;
  /**
   * A crashed request deletes the key's row without checking its fence (and so
   * without the status test either, which would itself be a guard: a finished
   * key is never in progress).
   */
  unfencedRelease?: boolean;
  /** The claim skips the fingerprint comparison (no 422 for one key with two bodies). */
  noFingerprint?: boolean;
  /** Every keyed write is answered 409 "in progress": safe, and no progress at all. */
  refuseKeyed?: boolean;
}

/** The broken guard of each known-wrong key_atomic variant. */
export const BROKEN_GUARDS = {
  key_atomic_no_expiry: { noExpiry: true },
  key_atomic_early_takeover: { earlyTakeover: true },
  key_atomic_unfenced_finish: { unfencedFinish: true },
  key_atomic_unfenced_release: { unfencedRelease: true },
  key_atomic_no_fingerprint: { noFingerprint: true },
  key_atomic_refuse_keyed: { refuseKeyed: true },
} as const satisfies Record<string, KeyAtomicGuards>;

const ALL_GUARDS: KeyAtomicGuards = {};

/**
 * Thrown inside the finish transaction only to make better-sqlite3 roll it
 * back: one shared value, not an Error, since capturing a stack trace on
 * every lost finish cost more than the rollback itself.
 */
const ROLL_BACK: unique symbol = Symbol('roll back');

/**
 * `key_atomic`: claim / process / finish.
 *
 * 1. *claim* (`BEGIN IMMEDIATE`): 422 on a fingerprint mismatch, replay when
 *    done, 409 while in progress within the lease; otherwise write an
 *    `in_progress` placeholder with `locked_at = now` and `fence = previous + 1`.
 * 2. *process*: the slow part, where the faults live.
 * 3. *finish*: insert the report and mark the key done in one transaction,
 *    guarded by my fence; if the guard touches ≠ 1 row, roll everything back
 *    (the report too) and answer with the winner's result, or 409.
 *
 * With `fencing: false` (variant `key_atomic_nofence`) the finish update is
 * guarded by the key alone. It must not keep even the `status='in_progress'`
 * test: that test is itself a weak fence, and the variant exists to show
 * what happens when a stale holder's finish is not fenced at all: a request
 * taken over after its lease still commits a second report.
 *
 * Steps: `claim` → `process` → `finish` → `respond`. Crash point: after the
 * claim, at the end of processing, before the report is written; the
 * placeholder is then deleted so a retry can take over at once. A killed process runs nothing, so its
 * placeholder stays until the lease expires (no `finally` is used for that).
 */
export class KeyAtomicStrategy implements WriteStrategy {
  readonly stepLabels = ['claim', 'process', 'finish', 'respond'] as const;

  constructor(
    readonly fencing: boolean,
    readonly variant: 'key_atomic' | 'key_atomic_nofence' | 'key_atomic_unscoped' | keyof typeof BROKEN_GUARDS = fencing ? 'key_atomic' : 'key_atomic_nofence',
    /** A known-wrong variant's broken guard; default: every guard intact. */
    readonly guards: KeyAtomicGuards = ALL_GUARDS,
  ) {}

  async write(req: WriteRequest, ctx: StrategyContext): Promise<TrackerResponse> {
    const { store } = ctx;
    const scoped = req.scopedKey;
    await ctx.step('claim', scoped === null ? TOUCHES_NOTHING : writes(keyRow(scoped)));
    let fence = 0;
    if (scoped !== null) {
      const claim = claimKey(store, scoped, req.fingerprint, ctx.nowMs(), ctx.leaseMs, this.guards);
      if (claim.kind === 'mismatch') return keyReusedResponse();
      if (claim.kind === 'in_progress') return inProgressResponse();
      if (claim.kind === 'replay') return replayOf(claim.row);
      fence = claim.fence;
      if (fence > 1) ctx.reached?.('lease-takeover'); // fence 1 is a new key; above, an expired lease was taken over
    }
    // `return await`: returning the promise itself from an async function costs two more microtask ticks.
    return await this.afterClaim(req, ctx, fence);
  }

  /**
   * Process and finish, once the key is claimed with `fence` (0 without a
   * key). Public so that a variant with another claim can reuse the rest.
   */
  async afterClaim(req: WriteRequest, ctx: StrategyContext, fence: number): Promise<TrackerResponse> {
    const { store } = ctx;
    const scoped = req.scopedKey;
    try {
      // A crash here deletes the placeholder, but a crash is a fault: while
      // one is armed the instance declares every phase as touching anything.
      await ctx.step('process', TOUCHES_NOTHING);
      await ctx.process();
      ctx.crashPoint('after-process'); // after the claim and processing, before the report write
    } catch (e) {
      // Processing failed in a live process: free the key so a retry need not wait out the lease.
      if (scoped !== null) {
        if (this.guards.unfencedRelease) store.deleteAnyPlaceholder(scoped);
        else store.deletePlaceholder(scoped, fence);
      }
      throw e;
    }
    await ctx.step('finish', scoped === null ? writes(REPORTS) : writes(REPORTS, keyRow(scoped)));
    if (scoped === null) {
      const id = store.insertReport(req.report, null, ctx.nowMs(), req.tenant);
      await ctx.step('respond', TOUCHES_NOTHING);
      return createdResponse(id);
    }
    const fin = finishKey(store, scoped, req.report, ctx.nowMs(), !this.fencing ? null : this.guards.unfencedFinish ? 'status' : fence, req.tenant);
    if (fin.kind === 'lost') {
      return fin.row?.status === 'done' ? replayOf(fin.row) : inProgressResponse();
    }
    await ctx.step('respond', TOUCHES_NOTHING);
    return createdResponse(fin.reportId);
  }

  restart(): void {
    // All state is in SQLite.
  }
}

function replayOf(row: KeyRow): TrackerResponse {
  return replayResponse(row.response_code ?? 500, row.response_body ?? '');
}

/** The two transactions, built once per Store: creating a better-sqlite3 transaction costs microseconds. */
interface AtomicTxs {
  claim(scoped: string, fp: string, nowMs: number, leaseMs: number, guards: KeyAtomicGuards): ClaimResult;
  finish(scoped: string, report: ReportInput, nowMs: number, fence: FinishGuard, tenant: string): FinishResult;
}

const txCache = new WeakMap<Store, AtomicTxs>();

function txsFor(store: Store): AtomicTxs {
  let txs = txCache.get(store);
  if (txs) return txs;
  const claim = store.transaction((scoped: string, fp: string, nowMs: number, leaseMs: number, g: KeyAtomicGuards): ClaimResult => {
    if (g.refuseKeyed) return { kind: 'in_progress' };
    const row = store.getKeyRow(scoped);
    if (!row) {
      store.insertPlaceholder(scoped, fp, nowMs, 1);
      return { kind: 'claimed', fence: 1 };
    }
    if (row.fingerprint !== fp && !g.noFingerprint) return { kind: 'mismatch' };
    if (row.status === 'done') return { kind: 'replay', row };
    if (g.noExpiry || nowMs - (row.locked_at ?? 0) < (g.earlyTakeover ? leaseMs / 2 : leaseMs)) return { kind: 'in_progress' };
    const fence = (row.fence ?? 0) + 1; // take over an expired lease
    store.takeOver(scoped, nowMs, fence);
    return { kind: 'claimed', fence };
  });
  const finish = store.transaction(
    (scoped: string, report: ReportInput, nowMs: number, fence: FinishGuard, tenant: string): FinishResult => {
      const reportId = store.insertReport(report, scoped, nowMs, tenant);
      const body = createdBody(reportId);
      const touched = fence === 'status' ? store.finishKeyStatusOnly(scoped, 201, body) : store.finishKey(scoped, 201, body, fence);
      if (touched !== 1) throw ROLL_BACK;
      return { kind: 'committed', reportId };
    },
  );
  txs = {
    claim: (...a) => claim.immediate(...a),
    finish: (...a) => finish.immediate(...a),
  };
  txCache.set(store, txs);
  return txs;
}

/** The claim transaction (`BEGIN IMMEDIATE`). Exported for hand-built interleavings in tests. */
export function claimKey(store: Store, scoped: string, fp: string, nowMs: number, leaseMs: number, guards: KeyAtomicGuards = ALL_GUARDS): ClaimResult {
  return txsFor(store).claim(scoped, fp, nowMs, leaseMs, guards);
}

/** The finish UPDATE's guard: my fence; `'status'` (in progress, any fence: a known-wrong variant); null (none: fencing off). */
export type FinishGuard = number | 'status' | null;

/**
 * The finish transaction: report + guarded key update, all or nothing
 * (`BEGIN IMMEDIATE`). `fence === null` means fencing off (unguarded update).
 */
export function finishKey(
  store: Store,
  scoped: string,
  report: ReportInput,
  nowMs: number,
  fence: FinishGuard,
  tenant: string = DEFAULT_TENANT,
): FinishResult {
  try {
    return txsFor(store).finish(scoped, report, nowMs, fence, tenant);
  } catch (e) {
    if (e !== ROLL_BACK) throw e;
    return { kind: 'lost', row: store.getKeyRow(scoped) };
  }
}
