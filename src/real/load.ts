import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Prng } from '../random/prng.js';
import { submitReport, type AttemptRecord, type HarnessResult } from '../harness/client.js';
import type { KeySource } from '../harness/keys.js';
import type { OperationEnd, Violation } from '../checkers/invariants.js';
import { checkServiceInvariants } from '../service/check.js';
import { builtinService, type BuiltinName as Variant } from '../tracker/builtin.js';
import Database from 'better-sqlite3';
import { ServerProcess } from './child.js';
import { httpTransport, realClientEnv, sleepMs } from './http-transport.js';
import { Supervisor } from './scenario-real.js';

/**
 * The bounded load-and-crash test: many logical operations, some run by
 * several workers at once with the same key, others alone, against one
 * `retrysim serve` child that is SIGKILLed and restarted (same port, same
 * file) several times while they run. Bounded in operations, attempts,
 * kills and wall time; loopback only; stops by itself.
 */

/** Options of {@link runLoad}; defaults are the benchmark's sizes. */
export interface LoadOptions {
  variant?: Variant;
  keySource?: KeySource;
  /** Logical operations. Default 200. */
  operations?: number;
  /** Every `sameKeyEvery`-th operation runs with 3 concurrent workers (same key); the rest with 1. Default 3. */
  sameKeyEvery?: number;
  /** Operations start spread uniformly over this window. Default 6000 ms. */
  spreadMs?: number;
  /** SIGKILLs of the server. Default 5. */
  kills?: number;
  /** First kill at this time, then one every `killEveryMs`. Default 1000 / 1200. */
  firstKillMs?: number;
  killEveryMs?: number;
  /** Down time after each kill. Default 200 ms. */
  restartAfterMs?: number;
  /** Server processing time, so kills land mid-request. Default 10 ms. */
  slowMs?: number;
  /** Client per-attempt timeout (lease = timeout + slow + 500). Default 1000 ms. */
  timeoutMs?: number;
  /** Harness attempts per operation (enough to outlast a lease after a kill). Default 40. */
  maxAttempts?: number;
  seed?: number;
  /** Hard wall-clock limit for the whole run. Default 60 s. */
  wallMsMax?: number;
}

/** What the load run measured and found. */
export interface LoadResult {
  operations: number;
  workers: number;
  attempts: number;
  wallMs: number;
  requestsPerSec: number;
  /** SIGKILLs the server survived (each followed by a restart on the same file). */
  killsSurvived: number;
  /** Attempt outcomes: HTTP status or transport failure → count. */
  outcomes: Record<string, number>;
  /** Operations whose every worker ended without a definite answer. */
  unresolved: number;
  /** Operations that do not hold exactly one report. */
  notExactlyOne: number;
  /** Acknowledged (2xx) report ids that are missing or belong to another operation. */
  lostAcknowledged: number;
  violations: Violation[];
}

/** Runs the load test; never leaves a child behind. */
export async function runLoad(o: LoadOptions = {}): Promise<LoadResult> {
  const opts = {
    variant: o.variant ?? 'key_atomic', keySource: o.keySource ?? 'tool_call', operations: o.operations ?? 200,
    sameKeyEvery: o.sameKeyEvery ?? 3, spreadMs: o.spreadMs ?? 6000, kills: o.kills ?? 5, firstKillMs: o.firstKillMs ?? 1000,
    killEveryMs: o.killEveryMs ?? 1200, restartAfterMs: o.restartAfterMs ?? 200, slowMs: o.slowMs ?? 10,
    timeoutMs: o.timeoutMs ?? 1000, maxAttempts: o.maxAttempts ?? 40, seed: o.seed ?? 1, wallMsMax: o.wallMsMax ?? 60_000,
  };
  const dir = mkdtempSync(join(tmpdir(), 'retrysim-load-'));
  const dbPath = join(dir, 'tracker.db');
  const server = new ServerProcess({
    variant: opts.variant, dbPath, slowMs: opts.slowMs, clientTimeoutMs: opts.timeoutMs,
    leaseMs: opts.timeoutMs + opts.slowMs + 500,
  });
  const sup = new Supervisor(server, opts.restartAfterMs, opts.kills);
  const t0 = Date.now();
  let stopKills = false;
  try {
    await server.start();
    await sup.watch();
    const transport = httpTransport(() => server.port);
    const root = new Prng(opts.seed);
    const ends: OperationEnd[] = [];
    const work: Promise<void>[] = [];
    let workers = 0;
    const deadline = t0 + opts.wallMsMax;
    for (let i = 0; i < opts.operations; i++) {
      const n = i % opts.sameKeyEvery === 0 ? 3 : 1;
      const end: OperationEnd = { id: `op${i}`, runId: `load-${i}`, tenant: 'default', keySource: opts.keySource, attempts: [], results: [] };
      ends.push(end);
      const startMs = (i * opts.spreadMs) / opts.operations;
      for (let w = 0; w < n; w++) {
        workers++;
        const env = realClientEnv(root.fork(`load/${i}/${w}`));
        work.push((async () => {
          await sleepMs(startMs);
          const log: AttemptRecord[] = [];
          const res: HarnessResult = Date.now() > deadline
            ? { kind: 'unknown', error: 'wall-clock limit reached before start', attempts: 0 }
            : await submitReport(
              { runId: end.runId, module: 'load', title: `operation ${i}`, steps: 'x' },
              `toolu_load_${i}`, transport, env,
              { keySource: opts.keySource, maxAttempts: opts.maxAttempts, timeoutMs: opts.timeoutMs }, log,
            );
          end.attempts.push(...log);
          end.results.push(res);
        })());
      }
    }
    const killer = (async () => {
      await sleepMs(opts.firstKillMs);
      for (let k = 0; k < opts.kills && !stopKills; k++) {
        if (server.alive) await server.kill();
        await sleepMs(opts.killEveryMs);
      }
    })();
    await Promise.all(work);
    const wallMs = Date.now() - t0;
    stopKills = true;
    await killer;
    await sup.stop();
    // Judged through the service's declared effects, on the file the servers wrote.
    const db = new Database(dbPath, { readonly: true });
    let verdict;
    try {
      verdict = checkServiceInvariants(builtinService(opts.variant), db, ends);
    } finally {
      db.close();
    }
    const outcomes: Record<string, number> = {};
    let attempts = 0;
    for (const e of ends) {
      for (const a of e.attempts) {
        attempts++;
        const k = a.outcome.kind === 'http' ? String(a.outcome.status) : a.outcome.reason;
        outcomes[k] = (outcomes[k] ?? 0) + 1;
      }
    }
    return {
      operations: opts.operations,
      workers,
      attempts,
      wallMs,
      requestsPerSec: Math.round((attempts / wallMs) * 1000),
      killsSurvived: sup.restarts,
      outcomes,
      unresolved: ends.filter((e) => !e.results.some((r) => r.kind === 'success')).length,
      notExactlyOne: Object.values(verdict.reports).filter((n) => n !== 1).length,
      lostAcknowledged: verdict.violations.filter((v) => v.invariant === 'id-exists' || (v.invariant === 'exactly-one' && v.detail.includes('told it succeeded'))).length,
      violations: verdict.violations,
    };
  } finally {
    stopKills = true;
    await sup.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
