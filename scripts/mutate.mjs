// `npm run mutate [-- SHARD ...]`: StrykerJS over the code whose verdicts the
// project sells, in shards that can run apart (a nightly job runs one shard
// per machine, or all in a row): `core` (strategies, checkers, choice and key
// sources: stryker.config.mjs), `campaign` (src/campaign's judging:
// stryker.campaign.config.mjs), `recovery` (the recovery phase, the
// minimiser, the client checks: stryker.recovery.config.mjs). No shard named:
// all three, one after another. Extra flags after the shards go to Stryker
// (`npm run mutate -- campaign --force` re-tests every mutant; Stryker 9.6 takes no `--incremental false` on the command line). Scores per shard and
// folder: docs/mutation.md.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const SHARDS = { core: 'stryker.config.mjs', campaign: 'stryker.campaign.config.mjs', recovery: 'stryker.recovery.config.mjs' };
const args = process.argv.slice(2);
const named = args.filter((a) => !a.startsWith('-') && a in SHARDS);
const flags = args.filter((a) => !named.includes(a));
const unknown = flags.filter((a) => !a.startsWith('-') && !/^\d+$/.test(a) && !['true', 'false'].includes(a));
if (unknown.length > 0) {
  console.error(`npm run mutate: unknown shard '${unknown[0]}' (shards: ${Object.keys(SHARDS).join(', ')})`);
  process.exit(2);
}
// The package exports no bin path; its file is where npm put it.
const stryker = join(import.meta.dirname, '..', 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js');
for (const shard of named.length > 0 ? named : Object.keys(SHARDS)) {
  console.log(`\n== mutate: shard ${shard} (${SHARDS[shard]})`);
  const r = spawnSync(process.execPath, [stryker, 'run', SHARDS[shard], ...flags], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
