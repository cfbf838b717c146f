import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { TOUCHES_NOTHING, type Footprint } from '../sim/footprint.js';
import { keyRow, REPORTS, reads, writes } from './footprints.js';
import { openStore, type Store } from './store.js';
import type { StrategyContext, WriteRequest, WriteStrategy } from './strategy.js';
import { claimKey, finishKey, KeyAtomicStrategy } from './strategies/key-atomic.js';
import { KeyAtomicRacyClaimStrategy } from './strategies/key-atomic-racy.js';
import { KeySplitStrategy } from './strategies/key-split.js';
import { NaiveStrategy } from './strategies/naive.js';
import { DEFAULT_COMPLETED_TTL_MS, MemorySingleflightStrategy } from './strategies/memory-singleflight.js';
import { TestEnv } from './test-env.js';

/**
 * The strategies called directly with a recording context: the steps they
 * declare (label and footprint — what partial-order reduction trusts), their
 * crash points, the values their transactions return, and what happens to an
 * error that is not the expected one. The scenario and property suites run
 * them end to end; these pin the contract each one offers the kernel.
 */

const K = 'scoped-k';
const report = { run_id: 'r1', module: 'm', title: 't', steps: 's' };
const req = (scopedKey: string | null, fingerprint = 'fp1'): WriteRequest => ({ tenant: 'default', key: scopedKey, scopedKey, report, fingerprint });

class CrashNow extends Error {}

function recorder(store: Store, opts: { nowMs?: number; leaseMs?: number; crash?: boolean } = {}) {
  const steps: Array<[string, Footprint | undefined]> = [];
  const crashes: string[] = [];
  const env = new TestEnv();
  const ctx: StrategyContext = {
    store,
    defer: () => env.defer(),
    leaseMs: opts.leaseMs ?? 5000,
    nowMs: () => opts.nowMs ?? 0,
    step: async (label, fp) => {
      steps.push([label, fp]);
    },
    process: async () => {},
    crashPoint: (p) => {
      crashes.push(p);
      if (opts.crash) throw new CrashNow(p);
    },
  };
  return { ctx, steps, crashes };
}

async function run(s: WriteStrategy, r: WriteRequest, store = openStore(), opts: Parameters<typeof recorder>[1] = {}) {
  const rec = recorder(store, opts);
  const res = await s.write(r, rec.ctx);
  return { res, store, ...rec };
}

describe('declared steps, footprints and crash points', () => {
  it('key_atomic with a key: claim writes the key row; finish writes the reports and the key row', async () => {
    const s = new KeyAtomicStrategy(true);
    const { res, steps, crashes } = await run(s, req(K));
    expect(res.status).toBe(201);
    expect(steps).toEqual([
      ['claim', writes(keyRow(K))],
      ['process', TOUCHES_NOTHING],
      ['finish', writes(REPORTS, keyRow(K))],
      ['respond', TOUCHES_NOTHING],
    ]);
    expect(steps.map(([l]) => l)).toEqual([...s.stepLabels]);
    expect(crashes).toEqual(['after-process']);
  });

  it('key_atomic without a key touches no key row', async () => {
    const { res, steps } = await run(new KeyAtomicStrategy(true), req(null));
    expect(res.status).toBe(201);
    expect(steps).toEqual([
      ['claim', TOUCHES_NOTHING],
      ['process', TOUCHES_NOTHING],
      ['finish', writes(REPORTS)],
      ['respond', TOUCHES_NOTHING],
    ]);
  });

  it('key_split: check reads the key row, insert writes the reports, register writes the key row', async () => {
    const s = new KeySplitStrategy();
    const { res, steps, crashes } = await run(s, req(K));
    expect(res.status).toBe(201);
    expect(steps).toEqual([
      ['check', reads(keyRow(K))],
      ['process', TOUCHES_NOTHING],
      ['insert', writes(REPORTS)],
      ['register', writes(keyRow(K))],
      ['respond', TOUCHES_NOTHING],
    ]);
    expect(crashes).toEqual(['after-insert']);
    const unkeyed = await run(s, req(null));
    expect(unkeyed.steps.map(([l, fp]) => [l, fp])).toEqual([
      ['check', TOUCHES_NOTHING],
      ['process', TOUCHES_NOTHING],
      ['insert', writes(REPORTS)],
      ['respond', TOUCHES_NOTHING],
    ]);
  });

  it('naive: its crash point comes after the report commit', async () => {
    const { crashes, steps } = await run(new NaiveStrategy(), req(K));
    expect(crashes).toEqual(['after-insert']);
    expect(steps.map(([l]) => l)).toEqual(['process', 'insert', 'respond']);
  });

  it('the default variant names follow fencing', () => {
    expect(new KeyAtomicStrategy(true).variant).toBe('key_atomic');
    expect(new KeyAtomicStrategy(false).variant).toBe('key_atomic_nofence');
  });
});

describe('key_atomic transactions as values', () => {
  it('claim: a new key, a take-over after the lease, a refusal within it; finish: committed with the id', () => {
    const store = openStore();
    expect(claimKey(store, K, 'fp1', 0, 500)).toEqual({ kind: 'claimed', fence: 1 });
    expect(claimKey(store, K, 'fp1', 499, 500)).toEqual({ kind: 'in_progress' });
    expect(claimKey(store, K, 'fp1', 500, 500)).toEqual({ kind: 'claimed', fence: 2 });
    expect(claimKey(store, K, 'fp2', 501, 500)).toEqual({ kind: 'mismatch' });
    expect(claimKey(store, K, 'fp1', 501, 500, { refuseKeyed: true })).toEqual({ kind: 'in_progress' });
    expect(finishKey(store, K, report, 502, 2)).toEqual({ kind: 'committed', reportId: 1 });
  });

  it('finish: an error other than the lost fence is not swallowed as "lost"', () => {
    const store = openStore();
    claimKey(store, K, 'fp1', 0, 500);
    store.insertReport = () => {
      throw new Database.SqliteError('disk I/O error', 'SQLITE_IOERR');
    };
    expect(() => finishKey(store, K, report, 1, 1)).toThrow(/disk I\/O/);
  });

  it('a crashed request whose key was taken over leaves the new holder’s placeholder alone', async () => {
    const store = openStore();
    expect(claimKey(store, K, 'fp1', 0, 500)).toEqual({ kind: 'claimed', fence: 1 });
    expect(claimKey(store, K, 'fp1', 600, 500)).toEqual({ kind: 'claimed', fence: 2 });
    const { ctx } = recorder(store, { nowMs: 700, leaseMs: 500, crash: true });
    await expect(new KeyAtomicStrategy(true).afterClaim(req(K), ctx, 1)).rejects.toBeInstanceOf(CrashNow);
    expect(store.getKeyRow(K)).toMatchObject({ status: 'in_progress', fence: 2, locked_at: 600 });
    // The guard-broken canary deletes it.
    await expect(new KeyAtomicStrategy(true, 'key_atomic_unfenced_release', { unfencedRelease: true }).afterClaim(req(K), ctx, 1)).rejects.toBeInstanceOf(CrashNow);
    expect(store.getKeyRow(K)).toBeUndefined();
  });
});

describe('key_split registration errors', () => {
  it('a concurrent registration (constraint) is a 500 answer; any other database error propagates', async () => {
    const s = new KeySplitStrategy();
    const dup = openStore();
    dup.insertDoneKey = () => {
      throw new Database.SqliteError('UNIQUE constraint failed', 'SQLITE_CONSTRAINT_PRIMARYKEY');
    };
    expect((await run(s, req(K), dup)).res.status).toBe(500);
    const io = openStore();
    io.insertDoneKey = () => {
      throw new Database.SqliteError('disk I/O error', 'SQLITE_IOERR');
    };
    await expect(run(s, req(K), io)).rejects.toThrow(/disk I\/O/);
  });

  it('a done key is replayed (or 422 for another body) without a second report', async () => {
    const s = new KeySplitStrategy();
    const store = openStore();
    await run(s, req(K), store);
    const again = await run(s, req(K), store);
    expect(again.res.status).toBe(201);
    expect(again.steps.map(([l]) => l)).toEqual(['check']);
    expect((await run(s, req(K, 'fp2'), store)).res.status).toBe(422);
    expect(store.countReports()).toBe(1);
  });
});

describe('key_atomic_racy_claim: the same decisions as key_atomic, made on a separate read', () => {
  const s = new KeyAtomicRacyClaimStrategy();

  it('claims a new key with fence 1 in a separate write step', async () => {
    const { res, steps, store } = await run(s, req(K));
    expect(res.status).toBe(201);
    expect(steps.slice(0, 2)).toEqual([
      ['claim', reads(keyRow(K))],
      ['claim-write', writes(keyRow(K))],
    ]);
    expect(store.getKeyRow(K)).toMatchObject({ status: 'done', fence: 1 });
  });

  it('replays a done key with its stored answer; 422 for another body', async () => {
    const store = openStore();
    const first = await run(s, req(K), store);
    const again = await run(s, req(K), store);
    expect(again.res).toMatchObject({ status: first.res.status, body: first.res.body });
    expect(again.steps.map(([l]) => l)).toEqual(['claim']);
    expect((await run(s, req(K, 'fp2'), store)).res.status).toBe(422);
    expect(store.countReports()).toBe(1);
  });

  it('409 within the lease; at the lease it takes over with the next fence', async () => {
    const store = openStore();
    claimKey(store, K, 'fp1', 100, 500);
    expect((await run(s, req(K), store, { nowMs: 599, leaseMs: 500 })).res.status).toBe(409);
    const taken = await run(s, req(K), store, { nowMs: 600, leaseMs: 500 });
    expect(taken.res.status).toBe(201);
    expect(store.getKeyRow(K)).toMatchObject({ status: 'done', fence: 2 });
  });

  it('finishes fenced: a stale holder taken over cannot commit', async () => {
    const store = openStore();
    claimKey(store, K, 'fp1', 0, 500);
    claimKey(store, K, 'fp1', 600, 500);
    const { ctx } = recorder(store, { nowMs: 700, leaseMs: 500 });
    const stale = await (s as unknown as { rest: KeyAtomicStrategy }).rest.afterClaim(req(K), ctx, 1);
    expect(stale.status).toBe(409);
    expect(store.countReports()).toBe(0);
  });
});

describe('memory_singleflight in-process maps', () => {
  it('keeps a completed key for 24 h by default; each strategy object (process) declares its own maps as the check step\'s resource', async () => {
    expect(DEFAULT_COMPLETED_TTL_MS).toBe(86_400_000);
    const a = await run(new MemorySingleflightStrategy(), req(K));
    const b = await run(new MemorySingleflightStrategy(), req(K));
    const [checkA, checkB] = [a.steps[0]!, b.steps[0]!];
    expect(checkA[0]).toBe('check');
    expect(checkA[1]).not.toEqual(checkB[1]);
    expect(JSON.stringify(checkA[1])).toMatch(/mem:\d+/);
    expect(a.crashes).toEqual(['after-process']);
  });

  it('a request without a key uses neither map', async () => {
    const s = new MemorySingleflightStrategy();
    expect((await run(s, req(null))).res.status).toBe(201);
    expect(s.sizes()).toEqual({ completed: 0, inFlight: 0 });
    await expect(run(s, req(null), openStore(), { crash: true })).rejects.toBeInstanceOf(CrashNow);
    expect(s.sizes()).toEqual({ completed: 0, inFlight: 0 });
  });

  it('a keyed success is kept as completed; a crash frees the in-flight entry', async () => {
    const s = new MemorySingleflightStrategy();
    await expect(run(s, req('other'), openStore(), { crash: true })).rejects.toBeInstanceOf(CrashNow);
    expect(s.sizes()).toEqual({ completed: 0, inFlight: 0 });
    await run(s, req(K));
    expect(s.sizes()).toEqual({ completed: 1, inFlight: 0 });
  });

  it('the sweep drops entries that expired, at the instant they expire', async () => {
    const s = new MemorySingleflightStrategy(1000);
    const store = openStore();
    await run(s, req('k1'), store, { nowMs: 0 });
    await run(s, req('k2'), store, { nowMs: 10 });
    await run(s, req('k3'), store, { nowMs: 999 });
    expect(s.sizes().completed).toBe(3);
    // Another key at t=1000: k1 (expiring at 1000) goes, k2 stays.
    await run(s, req('k4'), store, { nowMs: 1000 });
    expect(s.sizes().completed).toBe(3);
    await run(s, req('k5'), store, { nowMs: 1010 });
    expect(s.sizes().completed).toBe(3);
  });
});
