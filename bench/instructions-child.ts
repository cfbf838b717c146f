/**
 * The measured side of `npm run bench -- instructions`, run under valgrind's
 * callgrind with instrumentation off. Each measured piece is a window: the
 * child prints `ON <name>` and waits for a line on stdin (the parent turns
 * instrumentation on), runs the piece, prints `OFF <name>` and waits again
 * (the parent turns it off and dumps the count). Everything else — start-up,
 * imports, warm-up, recording — is not counted.
 *
 *   node --import tsx bench/instructions-child.ts campaign <checkout> <claim> <seed> <n> <warm>
 *     N scenarios of the claim's campaign in that checkout (scanRuns, as the
 *     floor bench's `cpu` mode), after `warm` scenarios of warm-up.
 *   node --import tsx bench/instructions-child.ts floor <claim> <seed> <n>
 *     the floor's three parts in this checkout (bench/floor-record.ts): the
 *     recorded SQLite stream replayed, generation, task switches.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';

const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

/** One counted window around `fn`. */
async function window(name: string, fn: () => unknown): Promise<void> {
  console.log(`ON ${name}`);
  await lines.next();
  await fn();
  console.log(`OFF ${name}`);
  await lines.next();
}

const [mode, ...a] = process.argv.slice(2);
if (mode === 'campaign') {
  const [root, claimId, seed, n, warm] = a as [string, string, string, string, string];
  const m = (p: string) => import(pathToFileURL(join(root, 'src', 'campaign', p)).href);
  const [job, run] = await Promise.all([m('job.ts'), m('run.ts')]);
  const scan = (runs: number) => run.scanRuns(job.optionsOf({ claimId, runs, seed: Number(seed), explore: 'random' }, () => performance.now()));
  await scan(Number(warm));
  let evaluated = 0;
  await window('campaign', async () => {
    evaluated = (await scan(Number(n))).evaluated;
  });
  if (evaluated !== Number(n)) throw new Error(`instructions bench: ${claimId} in ${root} evaluated ${evaluated} of ${n} runs`);
} else if (mode === 'floor') {
  const [claimId, seed, n] = a as [string, string, string];
  const f = await import('./floor-record.js');
  const s = await f.recordStream(claimId, Number(seed), Number(n));
  // Warm-up of each part, as the floor bench does: the JIT, not the work, would otherwise be counted.
  const warm = f.prepareReplay(s);
  warm.run(false);
  warm.close();
  f.generate(claimId, Number(seed), Number(n));
  await f.handOffs(s.taskSwitches);
  const replay = f.prepareReplay(s);
  await window('sql', () => replay.run(false));
  replay.close();
  await window('generation', () => f.generate(claimId, Number(seed), Number(n)));
  await window('switches', () => f.handOffs(s.taskSwitches));
} else {
  console.error(`instructions-child: unknown mode '${mode}' (campaign or floor)`);
  process.exit(2);
}
process.exit(0);
