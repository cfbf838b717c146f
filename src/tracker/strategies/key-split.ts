import {
  createdBody,
  createdResponse,
  errorResponse,
  keyReusedResponse,
  replayResponse,
  type TrackerResponse,
} from '../messages.js';
import { isSqliteError } from '../store.js';
import { TOUCHES_NOTHING } from '../../sim/footprint.js';
import { keyRow, reads, REPORTS, writes } from '../footprints.js';
import type { StrategyContext, WriteRequest, WriteStrategy } from '../strategy.js';

/**
 * `key_split`: look the key up (done → replay); else insert the report and
 * commit; *then*, in a second transaction, register the key as done. Two
 * commits, so anything between them (a crash, a concurrent twin) leaves a
 * report without its key: the retry files a second report, and a concurrent
 * second registration hits the primary key and answers 500.
 *
 * Steps: `check` → `process` → `insert` → `register` → `respond`.
 * Crash point: after the report commit, before key registration.
 */
export class KeySplitStrategy implements WriteStrategy {
  readonly variant = 'key_split' as const;
  readonly stepLabels = ['check', 'process', 'insert', 'register', 'respond'] as const;

  async write(req: WriteRequest, ctx: StrategyContext): Promise<TrackerResponse> {
    const { store } = ctx;
    const key = req.scopedKey === null ? TOUCHES_NOTHING : reads(keyRow(req.scopedKey));
    await ctx.step('check', key);
    if (req.scopedKey !== null) {
      const row = store.getKeyRow(req.scopedKey);
      if (row && row.status === 'done') {
        if (row.fingerprint !== req.fingerprint) return keyReusedResponse();
        return replayResponse(row.response_code ?? 500, row.response_body ?? '');
      }
    }
    await ctx.step('process', TOUCHES_NOTHING);
    await ctx.process();
    await ctx.step('insert', writes(REPORTS));
    const id = store.insertReport(req.report, req.scopedKey, ctx.nowMs(), req.tenant); // commit 1
    ctx.crashPoint('after-insert'); // after the report commit, before key registration
    if (req.scopedKey !== null) {
      await ctx.step('register', writes(keyRow(req.scopedKey)));
      try {
        store.insertDoneKey(req.scopedKey, req.fingerprint, ctx.nowMs(), 201, createdBody(id)); // commit 2
      } catch (e) {
        if (!isSqliteError(e, 'SQLITE_CONSTRAINT')) throw e;
        // The twin registered first; our report is already committed (the duplicate).
        return errorResponse(500, 'idempotency key was registered concurrently by another request');
      }
    }
    await ctx.step('respond', TOUCHES_NOTHING);
    return createdResponse(id);
  }

  restart(): void {
    // No in-process state.
  }
}
