import { Kernel, type RunResult } from './kernel.js';
import type { ChoiceSource } from './choice/source.js';

/**
 * A tiny model used by `retrysim demo`, the kernel tests and the kernel
 * benchmark: `workers` tasks each read a shared counter, yield (the classic
 * lost-update window), then write counter + 1. Whether updates are lost
 * depends only on the schedule, so it exercises choices, replay and hashing.
 */
export async function runCounterRace(opts: {
  seed: number;
  workers?: number;
  rounds?: number;
  choices?: ChoiceSource;
  trace?: boolean;
}): Promise<{ result: RunResult; counter: number; expected: number; kernel: Kernel }> {
  const workers = opts.workers ?? 3;
  const rounds = opts.rounds ?? 2;
  const k = new Kernel({ seed: opts.seed, choices: opts.choices, trace: opts.trace ?? true, replayHint: `retrysim demo --seed ${opts.seed}` });
  const jitter = k.fork('jitter');
  let counter = 0;
  for (let w = 0; w < workers; w++) {
    const name = `w${w}`;
    k.spawn(name, async () => {
      for (let r = 0; r < rounds; r++) {
        await k.sleep(jitter.int(3));
        const seen = counter;
        k.log(name, 'read', { counter: seen });
        await k.yield('write');
        counter = seen + 1;
        k.log(name, 'write', { counter });
      }
    });
  }
  const result = await k.run();
  return { result, counter, expected: workers * rounds, kernel: k };
}
