import { readFileSync } from 'node:fs';
import { flags } from './args.js';
import { mergeShards, parseShardFile, ShardError, type ShardFile } from '../campaign/shard.js';
import { printResults } from './check-report.js';
import { mergeServiceShards, parseServiceShard, SERVICE_SHARD_FORMAT } from '../service/shard.js';
import { reportServiceCampaign } from './check-service.js';
import { moduleStateLine } from '../app/module-probe.js';
import { CLIENT_SHARD_FORMAT, mergeClientShards, parseClientShard } from '../client/shard.js';
import { clientModuleStateLine } from '../client/module-state.js';
import { reportClientCampaign } from './check-client.js';

const HELP = `retrysim merge FILE... [--json]

Merges the --out files of a sharded campaign (retrysim check --shard I/N --out FILE)
and prints what the unsharded run prints: the same table, the same --json and the
same exit code. Every shard must be given once, all from one campaign (seed, runs,
exploration, claims). A shard's counts must be ones check writes: each shard owns
a fixed set of run indices, so a claim without a failure ran exactly that many
(at most that many under a time budget), a failing run is one of its own, and
its coverage counts no more runs than ran; a file that says otherwise (edited,
truncated) is refused, naming the claim and the numbers. A claim whose shards
ran fewer runs than asked (a time budget) is inconclusive, as in check.
Exit 0 when every claim is as expected, 1 when one is not, 4 when the only
problem is an inconclusive claim, 2 for a bad, missing, foreign or inconsistent shard file.

The shards of a campaign on your service (retrysim check --service PATH --shard I/N
--out FILE) merge the same way, into what check --service prints: the failure
at the lowest run number (the one the unsharded campaign stops at, shrunk the
same way), else holds over every shard's runs with the coverage summed, else
inconclusive. An app's (--app) shards that all hold give the verdict of the
per-process module probe shard 1 ran, as check --app does: its failure (the app
held only because its simulated instances shared module-level state) is the
verdict, exit 1.

The shards of a campaign on your retry client (retrysim check --client PATH
--shard I/N --out FILE) merge the same way, into what check --client prints;
when they all hold, the per-process runs shard 1 ran (the client's module
loaded once per simulated client process) give the verdict, as check --client
does: their failure is the verdict, exit 1, with check's line.`;

/** The parsed JSON of a service or client shard file (by its `format`), or undefined for anything else (parseShardFile then names what is wrong). */
function formatJson(text: string, format: string): unknown {
  try {
    const raw = JSON.parse(text) as unknown;
    return typeof raw === 'object' && raw !== null && (raw as { format?: unknown }).format === format ? raw : undefined;
  } catch {
    return undefined;
  }
}

/** The shards of one kind (`format`) among `texts`, or undefined when none is; a {@link ShardError} when only some are (kinds do not mix). */
function ofFormat(texts: ReadonlyArray<{ source: string; text: string }>, format: string): Array<{ source: string; raw: unknown }> | undefined {
  const all = texts.map(({ source, text }) => ({ source, raw: formatJson(text, format) }));
  const one = all.find((x) => x.raw !== undefined);
  if (one === undefined) return undefined;
  const other = all.find((x) => x.raw === undefined);
  if (other !== undefined) throw new ShardError(`${other.source}: not a ${format} file, unlike ${one.source}: shards of one campaign only`);
  return all;
}

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const a = flags('merge', argv, { json: { type: 'boolean' } }, HELP, true);
  if (typeof a === 'number') return a;
  if (a.positionals.length === 0) {
    console.error(`retrysim merge: expected the shard files to merge\n\n${HELP}`);
    return 2;
  }
  let merged;
  try {
    const texts = a.positionals.map((source) => {
      let text: string;
      try {
        text = readFileSync(source, 'utf8');
      } catch (e) {
        throw new ShardError(`${source}: cannot read file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      return { source, text };
    });
    // A service campaign's shards (check --service --shard) have a format of their own; the two do not mix.
    const service = ofFormat(texts, SERVICE_SHARD_FORMAT);
    if (service !== undefined) {
      const m = mergeServiceShards(service.map((x) => ({ source: x.source, file: parseServiceShard(x.raw, x.source) })));
      if (!a.values.json) console.log(`retrysim merge — ${a.positionals.length} shard(s) of ${m.flag} ${m.result.module}, seed ${m.result.seed}, explore ${m.result.explore}`);
      return await reportServiceCampaign(m.result, {
        subject: `${m.flag === '--app' ? 'app' : 'service'} ${m.result.service} (${m.result.module})`, expected: m.expect ?? undefined, json: a.values.json === true,
        timeBudgetMs: m.timeBudgetMs ?? undefined, runs: m.atLeast, reproduce: m.reproduce,
        // As check --app says it: how the modules were loaded, what shard 1's per-process probe covered, and the line when its failure is the verdict.
        moduleLoads: m.moduleLoads ?? 'once',
        ...(m.flag === '--app' ? { moduleProbe: m.moduleProbe === undefined ? null : { runs: m.moduleProbe.runs, verdict: m.moduleProbe.result.verdict } } : {}),
        ...(m.moduleState !== undefined && m.moduleProbe !== undefined ? { sharedModuleState: moduleStateLine(m.result.service, m.moduleState, m.moduleProbe) } : {}),
      });
    }
    // A client campaign's shards (check --client --shard), likewise.
    const client = ofFormat(texts, CLIENT_SHARD_FORMAT);
    if (client !== undefined) {
      const m = mergeClientShards(client.map((x) => ({ source: x.source, file: parseClientShard(x.raw, x.source) })));
      if (!a.values.json) console.log(`retrysim merge — ${a.positionals.length} shard(s) of --client ${m.module} (client '${m.result.client}' against ${m.against}), seed ${m.result.seed}, explore ${m.result.explore}`);
      // As check --client says it: a failure of shard 1's per-process probe is the verdict, with check's line.
      return reportClientCampaign(m.result, { module: m.module, expected: m.expect ?? undefined, json: a.values.json === true, timeBudgetMs: m.timeBudgetMs ?? undefined, runs: m.atLeast, command: m.command, moduleLoads: m.moduleLoads,
        ...(m.moduleProbe !== undefined ? { sharedModuleState: clientModuleStateLine(m.result.client, 'shared', m.moduleProbe.result, m.moduleProbe.runs) } : {}) });
    }
    const files: Array<{ source: string; file: ShardFile }> = texts.map(({ source, text }) => ({ source, file: parseShardFile(text, source) }));
    merged = mergeShards(files);
  } catch (e) {
    if (e instanceof ShardError) {
      console.error(`retrysim merge: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (!a.values.json) console.log(`retrysim merge — ${a.positionals.length} shard(s), seed ${merged.seed}, explore ${merged.explore}`);
  return printResults(merged.results, { seed: merged.seed, explore: merged.explore, json: a.values.json === true, wallMs: merged.wallMs });
}
