import { runLoad } from '../src/real/load.js';

/**
 * Real mode under load: concurrent harness clients (every third logical
 * operation run by three same-key workers at once) against a `retrysim
 * serve` child that is SIGKILLed and restarted on the same SQLite file five
 * times. Prints requests/s (HTTP attempts over loopback, each on a fresh
 * connection) and kills survived, and whether every operation still ended
 * with exactly one report.
 */
export default async function realBench(): Promise<void> {
  const r = await runLoad({ operations: 1500, spreadMs: 5000, kills: 5, firstKillMs: 800, killEveryMs: 1200, restartAfterMs: 200 });
  console.log(JSON.stringify({
    bench: 'real.loadWithKills',
    operations: r.operations,
    workers: r.workers,
    attempts: r.attempts,
    seconds: +(r.wallMs / 1000).toFixed(2),
    requestsPerSec: r.requestsPerSec,
    createdPerSec: Math.round(((r.outcomes['201'] ?? 0) / r.wallMs) * 1000),
    killsSurvived: r.killsSurvived,
    outcomes: r.outcomes,
    unresolved: r.unresolved,
    notExactlyOne: r.notExactlyOne,
    lostAcknowledged: r.lostAcknowledged,
  }));
  // Throughput without kills or slow processing: 1,000 operations (1,667 workers) started over 3 s.
  const q = await runLoad({ operations: 1000, spreadMs: 3000, kills: 0, slowMs: 0, timeoutMs: 2000 });
  console.log(JSON.stringify({
    bench: 'real.burstNoKills',
    operations: q.operations,
    attempts: q.attempts,
    seconds: +(q.wallMs / 1000).toFixed(2),
    requestsPerSec: q.requestsPerSec,
    createdPerSec: Math.round(((q.outcomes['201'] ?? 0) / q.wallMs) * 1000),
    outcomes: q.outcomes,
    notExactlyOne: q.notExactlyOne,
  }));
}
