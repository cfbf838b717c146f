import type { Deferred } from '../env.js';
import {
  createdBody,
  createdResponse,
  errorResponse,
  keyReusedResponse,
  replayResponse,
  type TrackerResponse,
} from '../messages.js';
import type { StrategyContext, WriteRequest, WriteStrategy } from '../strategy.js';

import { TOUCHES_NOTHING } from '../../sim/footprint.js';
import { REPORTS, writes } from '../footprints.js';

/** Numbers strategy objects, so each process's maps are a resource of their own in footprints. */
let processes = 0;

/** Default time a completed result is kept for replay: 24 h. */
export const DEFAULT_COMPLETED_TTL_MS = 24 * 60 * 60 * 1000;

/** A stored result for replay. */
export interface StoredResult {
  status: number;
  body: string;
}

interface Completed {
  fingerprint: string;
  result: StoredResult;
  expiresAtMs: number;
}

interface InFlight {
  fingerprint: string;
  done: Deferred<StoredResult>;
}

/**
 * `memory_singleflight`: the in-process store of the Java chapter. A
 * `completed` map (scoped key → result, with TTL) and an `inFlight` map
 * (scoped key → Deferred). The first request for a key puts its Deferred in
 * `inFlight`; a concurrent twin awaits it and replays the winner's result.
 * On failure the Deferred rejects and the entry is removed (failures are not
 * cached), so the twin gets 500 and its retry starts afresh.
 *
 * Keys are scoped by `scopeKey(tenant, 'POST', key)`. Reports go to SQLite
 * (they survive a restart) but the dedup state lives only in this process:
 * it is lost on `restart()` and not shared between two instances, which is
 * exactly how this variant is shown to fail.
 *
 * Steps: `check` → `process` → `insert` → `respond`. Crash point (our
 * choice, mirroring key_atomic): after the in-flight entry is registered and
 * processing ran, before the report is written; the entry is rejected and
 * removed, so twins waiting on it get 500 and nothing is cached.
 */
export class MemorySingleflightStrategy implements WriteStrategy {
  readonly variant = 'memory_singleflight' as const;
  readonly stepLabels = ['check', 'process', 'insert', 'respond'] as const;
  private completed = new Map<string, Completed>();
  private inFlight = new Map<string, InFlight>();
  /** Footprint resource of this process's maps. */
  private readonly memory = `mem:${++processes}`;

  constructor(readonly completedTtlMs: number = DEFAULT_COMPLETED_TTL_MS) {}

  async write(req: WriteRequest, ctx: StrategyContext): Promise<TrackerResponse> {
    // The maps are this process's: one resource per strategy object (one per
    // instance). The sweep may drop any expired key, so the whole map is one resource.
    await ctx.step('check', writes(this.memory));
    const scoped = req.scopedKey;
    // Captured now so a request from before a restart() never touches the new maps.
    const completed = this.completed;
    const inFlight = this.inFlight;
    let mine: InFlight | undefined;
    if (scoped !== null) {
      const now = ctx.nowMs();
      this.sweep(now);
      const hit = completed.get(scoped);
      if (hit && hit.expiresAtMs > now) {
        if (hit.fingerprint !== req.fingerprint) return keyReusedResponse();
        return replayResponse(hit.result.status, hit.result.body);
      }
      const other = inFlight.get(scoped);
      if (other) {
        if (other.fingerprint !== req.fingerprint) return keyReusedResponse();
        return awaitWinner(other);
      }
      // putIfAbsent: no await since the lookup above, so this is atomic.
      mine = { fingerprint: req.fingerprint, done: ctx.defer<StoredResult>() };
      inFlight.set(scoped, mine);
    }
    try {
      await ctx.step('process', TOUCHES_NOTHING);
      await ctx.process();
      ctx.crashPoint('after-process'); // after processing, before the report write
      await ctx.step('insert', writes(REPORTS, this.memory));
      const id = ctx.store.insertReport(req.report, scoped, ctx.nowMs(), req.tenant);
      if (scoped !== null && mine) {
        const result = { status: 201, body: createdBody(id) };
        completed.set(scoped, { fingerprint: req.fingerprint, result, expiresAtMs: ctx.nowMs() + this.completedTtlMs });
        inFlight.delete(scoped);
        mine.done.resolve(result);
      }
      await ctx.step('respond', TOUCHES_NOTHING);
      return createdResponse(id);
    } catch (e) {
      // Failures are not cached: wake the waiters with the error and free the key.
      if (scoped !== null && mine && inFlight.get(scoped) === mine) {
        inFlight.delete(scoped);
        mine.done.reject(e);
      }
      throw e;
    }
  }

  /**
   * Drops expired completed entries. Entries are inserted in expiry order
   * (constant TTL, monotonic clock), so sweeping from the front suffices.
   */
  private sweep(nowMs: number): void {
    for (const [key, entry] of this.completed) {
      if (entry.expiresAtMs > nowMs) break;
      this.completed.delete(key);
    }
  }

  /** Number of completed and in-flight entries (for tests and traces). */
  sizes(): { completed: number; inFlight: number } {
    return { completed: this.completed.size, inFlight: this.inFlight.size };
  }

  restart(): void {
    // New maps rather than clear(): requests of the dead process keep the old ones.
    this.completed = new Map();
    this.inFlight = new Map();
  }
}

async function awaitWinner(entry: InFlight): Promise<TrackerResponse> {
  try {
    const result = await entry.done.wait();
    return replayResponse(result.status, result.body);
  } catch {
    return errorResponse(500, 'the in-flight request with this idempotency key failed; retry');
  }
}
