// StrykerJS, the src/campaign shard of `npm run mutate`: the judging path of
// a campaign — verdict words and exit codes, a claim's judgement, the scan
// and its failure predicate, run slicing, shard merge, bounded-exhaustive
// search, the coverage table and the small scenarios. Left out: pool.ts,
// job.ts and worker-bundle.ts (their code runs in worker threads, where a
// mutant planted in this process is not active), claims.ts (the claims'
// data: titles and fault lists, whose only logic is a lookup by id) and
// minimise.ts (its own shard). See docs/mutation.md, "Shard: src/campaign".
import { shard } from './stryker.shard.mjs';

export default shard({
  name: 'campaign',
  mutate: [
    'src/campaign/verdict.ts',
    'src/campaign/judge.ts',
    'src/campaign/run.ts',
    'src/campaign/runs.ts',
    'src/campaign/shard.ts',
    'src/campaign/exhaustive.ts',
    'src/campaign/coverage.ts',
    'src/campaign/small.ts',
  ],
  vitestConfig: 'vitest.stryker.campaign.config.ts',
  concurrency: 1,
});
