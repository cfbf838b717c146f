import { createdResponse, type TrackerResponse } from '../messages.js';
import { TOUCHES_NOTHING } from '../../sim/footprint.js';
import { REPORTS, writes } from '../footprints.js';
import type { StrategyContext, WriteRequest, WriteStrategy } from '../strategy.js';

/**
 * `naive`: ignores idempotency keys. Insert the report, commit, answer 201.
 * Every retry of a request whose answer was lost files another report.
 *
 * Steps: `process` → `insert` → `respond`. Crash point: after the report
 * commit (the report exists, the client sees 500 and retries).
 */
export class NaiveStrategy implements WriteStrategy {
  readonly variant = 'naive' as const;
  readonly stepLabels = ['process', 'insert', 'respond'] as const;

  async write(req: WriteRequest, ctx: StrategyContext): Promise<TrackerResponse> {
    await ctx.step('process', TOUCHES_NOTHING);
    await ctx.process();
    await ctx.step('insert', writes(REPORTS));
    // A single INSERT is its own (autocommit) transaction; the key is ignored on purpose.
    const id = ctx.store.insertReport(req.report, null, ctx.nowMs(), req.tenant);
    ctx.crashPoint('after-insert'); // after the report commit
    await ctx.step('respond', TOUCHES_NOTHING);
    return createdResponse(id);
  }

  restart(): void {
    // No in-process state.
  }
}
