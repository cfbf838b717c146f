// StrykerJS, one shard of the judging path (issue 21): the recovery phase
// (invariant 5's "after the faults stop"), the counterexample minimiser,
// and the checks that judge a user's retry client. Run with
//   npx stryker run stryker.recovery.config.mjs --concurrency 1
// Figures and the survivors it leaves: docs/mutation.md, "Shard: recovery,
// minimiser, client checks".
import { shard } from './stryker.shard.mjs';

export default shard({
  name: 'recovery',
  // checks.ts: the client checks (clientCheckViolations, the shared-key
  // check, the per-call checks from retry-after to deadline, the
  // resolved-without-effect check), moved out of run.ts so that no line
  // range drifts as run.ts changes; the rest of run.ts is plumbing (kernel,
  // network, bridge) and the attempt records handed to the service's
  // invariants, whose unread fields (title, transport reason) would only
  // add equivalent mutants. replay.ts (replay divergence) stays in
  // stryker.config.mjs, whose scenario and canary suites kill its mutants.
  mutate: ['src/scenario/recovery.ts', 'src/campaign/minimise.ts', 'src/client/checks.ts'],
  vitestConfig: 'vitest.stryker.recovery.config.ts',
  concurrency: 1,
});
