// StrykerJS: `npm run mutate`. Mutation testing of the code whose verdicts
// the project sells — the write strategies, the invariant checkers, the
// choice sources and the key sources. Too slow for CI (see docs/mutation.md
// for the timing); run it before changing any of these files.
import { shard } from './stryker.shard.mjs';

export default shard({
  mutate: ['src/tracker/strategies/*.ts', 'src/checkers/*.ts', 'src/sim/choice/*.ts', 'src/harness/keys.ts', '!src/**/*.test.ts'],
  vitestConfig: 'vitest.stryker.config.ts',
  concurrency: 2,
});
