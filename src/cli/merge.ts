import { readFileSync } from 'node:fs';
import { flags } from './args.js';
import { mergeShards, parseShardFile, ShardError, type ShardFile } from '../campaign/shard.js';
import { printResults } from './check-report.js';

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
problem is an inconclusive claim, 2 for a bad, missing, foreign or inconsistent shard file.`;

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
    const files: Array<{ source: string; file: ShardFile }> = a.positionals.map((source) => {
      let text: string;
      try {
        text = readFileSync(source, 'utf8');
      } catch (e) {
        throw new ShardError(`${source}: cannot read file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      return { source, file: parseShardFile(text, source) };
    });
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
