import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CLAIMS, claimById } from '../src/campaign/claims.js';
import { runCampaign } from '../src/campaign/run.js';

const clock = () => performance.now();

/**
 * The property campaign: generated key_atomic scenarios per second (one
 * core), time to the first shrunk counterexample per failing claim (target
 * ≤ 1 s each), and 100,000 key_atomic scenarios through `retrysim check` on
 * two worker threads (target ≤ 60 s) with RSS at start and end (flat is good).
 */
export default async function checkBench(): Promise<void> {
  {
    const claim = claimById('key_atomic-tool_call-holds');
    const runs = 5000;
    const t0 = clock();
    const r = await runCampaign({ claim, runs, seed: 3 });
    const s = (clock() - t0) / 1000;
    console.log(JSON.stringify({ bench: 'check.generatedScenarios', claim: claim.id, runs: r.runs, verdict: r.verdict, seconds: +s.toFixed(3), scenariosPerSec: Math.round(r.runs / s) }));
  }
  for (const claim of CLAIMS.filter((c) => c.expected === 'fails')) {
    const t0 = clock();
    const r = await runCampaign({ claim, runs: 100_000, seed: 3, clockMs: clock });
    const ms = clock() - t0;
    console.log(JSON.stringify({ bench: 'check.timeToShrunkCounterexample', claim: claim.id, verdict: r.verdict, firstFailureMs: +(r.firstFailureMs ?? -1).toFixed(1), shrinks: r.shrinks, shrunkMs: +ms.toFixed(1), targetMs: 1000 }));
  }
  {
    const bin = join(import.meta.dirname, '..', 'bin', 'retrysim.js');
    const t0 = clock();
    const p = spawnSync(process.execPath, [bin, 'check', '--variant', 'key_atomic', '--runs', '50000', '--workers', '2', '--json', '--found', tmpdir()], { encoding: 'utf8', maxBuffer: 1 << 24, env: { ...process.env, RETRYSIM_DEBUG: '1' } }); // RETRYSIM_DEBUG=1: the memory line
    const s = (clock() - t0) / 1000;
    const out = JSON.parse(p.stdout) as Array<{ claim: string; runs: number; verdict: string }>;
    const holds = out.filter((r) => r.claim.endsWith('-holds'));
    const mem = /rss (\d+) MB at start, (\d+) MB at end, peak (\d+) MB/.exec(p.stderr);
    console.log(JSON.stringify({
      bench: 'check.keyAtomic100k',
      scenarios: holds.reduce((n, r) => n + r.runs, 0),
      claimsNotHolding: holds.filter((r) => r.verdict !== 'holds').length,
      seconds: +s.toFixed(1),
      targetSeconds: 60,
      workers: 2,
      rssStartMb: mem ? Number(mem[1]) : null,
      rssEndMb: mem ? Number(mem[2]) : null,
      rssPeakMb: mem ? Number(mem[3]) : null,
    }));
  }
}
