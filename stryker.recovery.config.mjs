// StrykerJS, one shard of the judging path (issue 21): the recovery phase
// (invariant 5's "after the faults stop"), the counterexample minimiser,
// and the checks that judge a user's retry client. Run with
//   npx stryker run stryker.recovery.config.mjs --concurrency 1
// Figures and the survivors it leaves: docs/mutation.md, "Shard: recovery,
// minimiser, client checks".
import { shard } from './stryker.shard.mjs';

export default shard({
  name: 'recovery',
  // run.ts: only its client checks (clientCheckViolations and the shared-key
  // check, lines 303-342, and the per-call checks, retry-after to deadline with
  // the resolved-without-effect check among them, 383-568; keep these ranges on
  // them when the file moves); the rest of the file is plumbing
  // (kernel, network, bridge) and the attempt records handed to the
  // service's invariants, whose unread fields (title, transport reason)
  // would only add equivalent mutants. replay.ts (replay divergence) stays
  // in stryker.config.mjs, whose scenario and canary suites kill its mutants.
  mutate: ['src/scenario/recovery.ts', 'src/campaign/minimise.ts', 'src/client/run.ts:301-340', 'src/client/run.ts:381-577'],
  vitestConfig: 'vitest.stryker.recovery.config.ts',
  concurrency: 1,
});
