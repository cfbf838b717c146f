import { flags, intFlag, usage, UsageError, writableDir } from './args.js';
import { ClientError, loadClient } from '../client/load.js';
import { CLIENT_FOUND_DIR, runClientCampaign, type ClientCampaignResult } from '../client/campaign.js';
import { loadService } from '../service/load.js';
import { ServiceError } from '../service/errors.js';
import { BUILTIN_SERVICES as VARIANTS, type BuiltinName as Variant } from '../tracker/builtin.js';
import { textTable } from '../report/table.js';

const DEFAULT_RUNS = 300;

const HELP = `retrysim check --client PATH [--name N] [--variant V | --service PATH] [--runs N] [--seed S]
               [--expect holds|refuted] [--found DIR] [--json]

The property campaign on your own retry client: a module exporting a
RetryClient ({ name, deadlineMs, run(fetch, op) }; TypeScript or JavaScript,
no build step). Each generated scenario runs the client on virtual time
with a fetch whose requests meet the simulated network's faults — lost
answers after a commit and on the way back, crashes, slow and paused
requests, kill/restart, two instances, 429 with Retry-After, a front end
answering 400/401/403/404/422 or 408/409/429/503 — and judges:
progress (every call sends at least one request), stable-key (one key per
operation), deadline (settled and silent within
deadlineMs), retry-after (waits what a Retry-After asks), non-retryable
(never sends again after 400/401/403/404/422), exactly-one, id-exists and
replay-equals-first on the service's effects and answers. A failure is shrunk and written as a
scenario file that \`retrysim replay FILE\` reproduces.

  --client PATH   the client module (required)
  --name N        which exported client (by its name); default the default export
  --variant V     the service it talks to, built in: ${VARIANTS.join(', ')} (default key_atomic,
                  a correct endpoint, so what fails is the client)
  --service PATH  ...or your own service module
  --runs N        generated scenarios (default ${DEFAULT_RUNS})
  --seed S        the campaign seed (default 1)
  --expect V      holds or refuted: exit 0 only when the verdict is this one
  --found DIR     where the counterexample goes (default ${CLIENT_FOUND_DIR}, git-ignored)
  --json          {client, module, seed, runs, verdict, expected, ok, counterexample, shrunkSize, violations, replay}

Exit: 0 the client holds (or the verdict is --expect's), 1 it is refuted
(or not --expect's verdict), 2 bad flags, a module that cannot be loaded,
or a client that cannot run on virtual time (it never settles).`;

/** `retrysim check --client ...`; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  return usage('check', async () => {
    const a = flags('check', argv, {
      client: { type: 'string' },
      name: { type: 'string' },
      variant: { type: 'string' },
      service: { type: 'string' },
      runs: { type: 'string' },
      seed: { type: 'string' },
      expect: { type: 'string' },
      found: { type: 'string' },
      json: { type: 'boolean' },
    }, HELP);
    if (typeof a === 'number') return a;
    const v = a.values;
    if (v.client === undefined || v.client === '') throw new UsageError('--client PATH is required');
    if (v.variant !== undefined && v.service !== undefined) throw new UsageError('give --variant (built in) or --service (your own), not both');
    if (v.variant !== undefined && !(VARIANTS as readonly string[]).includes(v.variant)) throw new UsageError(`--variant must be one of ${VARIANTS.join(', ')}, got '${v.variant}'`);
    if (v.expect !== undefined && v.expect !== 'holds' && v.expect !== 'refuted') throw new UsageError(`--expect must be holds or refuted, got '${v.expect}'`);
    const runs = intFlag('runs', v.runs, DEFAULT_RUNS, 1, 1_000_000);
    const seed = intFlag('seed', v.seed, 1);
    const found = writableDir('found', v.found ?? CLIENT_FOUND_DIR);
    const log = (s: string) => (v.json ? console.error(s) : console.log(s));
    let r: ClientCampaignResult;
    try {
      const client = await loadClient(v.client, v.name);
      const service = v.service === undefined ? undefined : await loadService(v.service);
      const against = service ? `service ${service.name} (${v.service})` : `built-in ${v.variant ?? 'key_atomic'}`;
      log(`retrysim check --client ${v.client} — client '${client.name}' against ${against}, seed ${seed}, ${runs} scenarios`);
      log(`reproduce: retrysim check ${process.argv.slice(3).join(' ')}`);
      r = await runClientCampaign({
        client, module: v.client, runs, seed, foundDir: found,
        ...(service ? { service, serviceModule: v.service } : { variant: (v.variant ?? 'key_atomic') as Variant }),
      });
    } catch (e) {
      if (e instanceof ClientError || e instanceof ServiceError) {
        console.error(`retrysim check: ${e.message}`);
        return 2;
      }
      throw e;
    }
    const ok = v.expect === undefined ? r.verdict === 'holds' : r.verdict === v.expect;
    const cx = r.counterexample;
    const invariants = cx ? [...new Set(cx.violations.map((x) => x.invariant))] : [];
    if (v.json) {
      console.log(JSON.stringify({
        client: r.client, module: v.client, seed: r.seed, runs: r.runs, verdict: r.verdict, expected: v.expect ?? null, ok,
        counterexample: cx?.file ?? null, shrunkSize: cx?.size ?? null, violations: invariants, replay: cx?.replay ?? null,
      }));
      return ok ? 0 : 1;
    }
    console.log('');
    console.log(textTable(['', 'client', 'runs', 'verdict', 'shrunk to', 'counterexample'], [[
      ok ? '✓' : '✗', r.client, r.runs, r.verdict,
      cx ? `${cx.size.operations} op, ${cx.size.workers} worker(s), ${cx.size.faults} fault(s), ${cx.size.attempts} request(s)` : '-',
      cx?.file ?? '-',
    ]]));
    if (cx) {
      for (const w of cx.run.workers) for (const q of w.sent) console.log(`  ${w.name}  t=${q.atMs.toFixed(0)} ms  ${q.method} ${q.path}  key=${q.key ?? '(none)'}  → ${q.outcome ?? 'no answer'}${q.retryAfter !== undefined ? ` (Retry-After: ${q.retryAfter})` : ''}`);
      for (const x of cx.violations) console.log(`  ${x.invariant} (${x.op}): ${x.detail}`);
      console.log(`  replay: ${cx.replay}`);
    }
    if (v.expect !== undefined && !ok) console.log(`\n✗ expected the client to be ${v.expect}, but it ${r.verdict === 'holds' ? 'held' : 'was refuted'}`);
    return ok ? 0 : 1;
  });
}
