import { flags, intFlag, usage } from './args.js';
import { runCounterRace } from '../sim/demo-model.js';
import { ReplayChoice } from '../sim/choice/replay.js';
import { Kernel } from '../sim/kernel.js';
import { runOnVirtualTime } from '../sim/fake-timers.js';

const HELP = `retrysim demo [--seed N] [--trace]

Shows the kernel end to end: three workers race on a shared counter with a
read–yield–write window; the seeded choice source picks the interleaving, the
run is replayed from its recorded choices (same trace hash), and a retry loop
written with plain setTimeout/Date.now runs 31 s of "time" in milliseconds.

Exit: 0, 2 bad flags.`;

/** Runs the subcommand with its arguments; resolves to the exit code. */
export async function run(argv: string[]): Promise<number> {
  const a = flags('demo', argv, { seed: { type: 'string' }, trace: { type: 'boolean' } }, HELP);
  if (typeof a === 'number') return a;
  return usage('demo', () => demo(intFlag('seed', a.values.seed, 1), a.values.trace === true));
}

async function demo(seed: number, trace: boolean): Promise<number> {
  console.log(`retrysim demo — seed ${seed}`);
  const a = await runCounterRace({ seed });
  if (trace) for (const l of a.kernel.trace!.lines()) console.log('  ' + l);
  console.log(`counter race: counter=${a.counter} of ${a.expected} increments (${a.expected - a.counter} lost updates), ` +
    `${a.result.choices.length} choices, t=${a.result.timeMs} ms, trace ${a.result.traceHash.slice(0, 16)}`);
  const b = await runCounterRace({ seed, choices: new ReplayChoice(a.result.choices) });
  console.log(`replayed from its ${a.result.choices.length} recorded choices: trace ${b.result.traceHash.slice(0, 16)} ` +
    (b.counter === a.counter ? '(same outcome)' : '(DIFFERENT outcome)'));

  const k = new Kernel({ seed });
  const wall0 = process.hrtime.bigint(); // real-time: allowed (CLI wall-clock report)
  const task = k.spawn('client', () =>
    runOnVirtualTime(k, async () => {
      // Plain timer code, unaware of the kernel: 5 retries, doubling waits.
      const start = Date.now();
      const at: number[] = [];
      for (let i = 0, d = 1000; i < 5; i++, d *= 2) {
        await new Promise((r) => setTimeout(r, d));
        at.push(Date.now() - start);
      }
      return at;
    }),
  );
  await k.run();
  const wallMs = Number(process.hrtime.bigint() - wall0) / 1e6; // real-time: allowed (CLI wall-clock report)
  console.log(`fake-timers bridge: retries at ${(task.done.value as number[]).join(', ')} ms of virtual time; ` +
    `virtual ${k.now} ms in ${wallMs.toFixed(1)} ms of wall time`);
  return b.result.traceHash === a.result.traceHash ? 0 : 1;
}
