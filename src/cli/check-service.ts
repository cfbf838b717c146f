import { flags, intFlag, usage, UsageError, writableDir } from './args.js';
import { KEY_SOURCES, type KeySource } from '../harness/keys.js';
import { loadService } from '../service/load.js';
import { runServiceCampaign, serviceFaults, type ServiceCampaignResult } from '../service/campaign.js';
import { ServiceError } from '../service/errors.js';
import { textTable } from '../report/table.js';

const DEFAULT_RUNS = 10_000;

const HELP = `retrysim check --service PATH [--runs N] [--seed S] [--key-source K] [--expect holds|refuted]
               [--found DIR] [--json]

The property campaign against your own service (a TypeScript or JavaScript
module whose default export is a ServiceDefinition; no build step). The
standard fault space — lost responses after commit and on the way back, a
crash at each declared crash point, slow steps and pauses at each declared
step, kill/restart, two instances on one database, clock skew, concurrent
duplicates, two tenants with the same raw key, the same key with a different
body — runs with the built-in retrying client, and the service's declared
effects are judged: exactly one per logical operation, every acknowledged id
exists and is the operation's own, stable keys, a reused key with another
body refused. A failure is minimised and written as a replayable file.

  --service PATH  the service module (required)
  --runs N        generated scenarios (default ${DEFAULT_RUNS})
  --seed S        the campaign seed (default 1)
  --key-source K  the client's key source: ${KEY_SOURCES.join(', ')} (default tool_call)
  --expect V      holds or refuted: exit 0 only when the verdict is this one
  --found DIR     where the counterexample goes (default scenarios/found)
  --json          {service, module, keySource, seed, runs, verdict, ok, firstFailureMs,
                   counterexample, shrunkSize, violations, removed, replay}

Exit: 0 the service holds (or the verdict is --expect's), 1 it is refuted
(or the verdict is not --expect's), 2 bad flags or a broken service (a
message names the problem: a throw, a request never answered, an
undeclared step or table).`;

function sizeText(s: NonNullable<ServiceCampaignResult['counterexample']>['size']): string {
  return `${s.operations} op, ${s.workers} worker${s.workers === 1 ? '' : 's'}, ${s.faults} fault${s.faults === 1 ? '' : 's'}, ${s.attempts} attempts, ${s.preemptions} preemption${s.preemptions === 1 ? '' : 's'}${s.instances > 1 ? `, ${s.instances} instances` : ''}`;
}

/** `retrysim check --service ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  return usage('check', async () => {
    const a = flags('check', argv, {
      service: { type: 'string' },
      runs: { type: 'string' },
      seed: { type: 'string' },
      'key-source': { type: 'string' },
      expect: { type: 'string' },
      found: { type: 'string' },
      json: { type: 'boolean' },
    }, HELP);
    if (typeof a === 'number') return a;
    const v = a.values;
    if (v.service === undefined) throw new UsageError('--service PATH is required');
    const keySource = (v['key-source'] ?? 'tool_call') as KeySource;
    if (!KEY_SOURCES.includes(keySource)) throw new UsageError(`--key-source must be one of ${KEY_SOURCES.join(', ')}, got '${keySource}'`);
    if (v.expect !== undefined && v.expect !== 'holds' && v.expect !== 'refuted') throw new UsageError(`--expect must be holds or refuted, got '${v.expect}'`);
    const runs = intFlag('runs', v.runs, DEFAULT_RUNS, 1);
    const seed = intFlag('seed', v.seed, 1);
    const found = writableDir('found', v.found ?? 'scenarios/found');
    const log = (s: string) => (v.json ? console.error(s) : console.log(s));
    let r: ServiceCampaignResult;
    try {
      const def = await loadService(v.service);
      log(`retrysim check --service ${v.service} — service ${def.name}, seed ${seed}, ${runs} scenarios, key source ${keySource}`);
      log(`faults: ${serviceFaults(def).join(', ')}; steps: ${def.steps.join(', ')}; crash points: ${(def.crashPoints ?? []).join(', ') || 'none'}`);
      log(`reproduce: retrysim check --service ${v.service} --seed ${seed} --runs ${runs}${keySource !== 'tool_call' ? ` --key-source ${keySource}` : ''}`);
      const clock = () => performance.now();
      r = await runServiceCampaign({ def, module: v.service, keySource, runs, seed, foundDir: found, clockMs: clock });
    } catch (e) {
      if (e instanceof ServiceError) {
        console.error(`retrysim check: ${e.message}`);
        return 2;
      }
      throw e;
    }
    const ok = v.expect === undefined ? r.verdict === 'holds' : r.verdict === v.expect;
    const cx = r.counterexample;
    if (v.json) {
      console.log(JSON.stringify({
        service: r.service, module: r.module, keySource: r.keySource, seed: r.seed, runs: r.runs, verdict: r.verdict,
        expected: v.expect ?? null, ok,
        firstFailureMs: r.firstFailureMs === undefined ? null : Math.round(r.firstFailureMs),
        counterexample: cx?.file ?? null, shrunkSize: cx?.size ?? null,
        violations: cx ? [...new Set(cx.violations.map((x) => x.invariant))] : [],
        preemptionsMinimal: cx?.preemptionsMinimal ?? null, removed: cx?.removed ?? [], replay: cx?.replay ?? null,
      }));
      return ok ? 0 : 1;
    }
    console.log('');
    console.log(textTable(['', 'service / key source', 'runs', 'verdict', 'first failure', 'shrunk to', 'counterexample'], [[
      ok ? '✓' : '✗',
      `${r.service} / ${r.keySource}`,
      r.runs,
      r.verdict,
      r.firstFailureMs === undefined ? '-' : `${Math.round(r.firstFailureMs)} ms`,
      cx ? sizeText(cx.size) : '-',
      cx?.file ?? '-',
    ]]));
    if (cx) {
      for (const x of cx.violations) console.log(`  ${x.invariant} (${x.op}): ${x.detail}`);
      console.log(`  replay: ${cx.replay}`);
    }
    if (v.expect !== undefined && !ok) console.log(`\n✗ expected the service to be ${v.expect}, but it ${r.verdict === 'holds' ? 'held' : 'was refuted'}`);
    return ok ? 0 : 1;
  });
}
