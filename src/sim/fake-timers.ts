import FakeTimers from '@sinonjs/fake-timers';
import type { Kernel } from './kernel.js';

/**
 * The fake-timers bridge: runs *unmodified* code that uses setTimeout,
 * setInterval, Date and performance.now on the kernel's virtual clock, via
 * @sinonjs/fake-timers. One implementation of a retrying client can therefore
 * run for real and in simulation, and a wall-clock test can be replayed in
 * virtual time.
 *
 * How it works: inside a kernel task we install a fake clock (never faking
 * nextTick or queueMicrotask — that hangs promise-based code and vitest),
 * start the code, and then repeatedly (1) let its promise chains settle,
 * (2) find the earliest fake timer, (3) sleep the kernel task until that
 * virtual time — so other kernel tasks interleave correctly — and (4) tick
 * the fake clock to fire it. The code sees virtual time pass; the host sees
 * milliseconds.
 *
 * Only one bridged computation may be active at a time, because the fake
 * clock replaces process globals.
 */
export interface BridgeOptions {
  /** Limit on fired timer rounds; a runaway setInterval hits it. Default 100,000. */
  roundsMax?: number;
}

let active = false;

// Captured before any fake clock is installed: the bridge needs the real
// setImmediate to let promise chains settle between timer rounds. This is
// not a read of real time — it only orders host-level work.
const realSetImmediate = globalThis.setImmediate; // real-time: allowed (microtask drain, no time read)

function settle(): Promise<void> {
  return new Promise((resolve) => realSetImmediate(resolve));
}

function earliestTimer(clock: FakeTimers.Clock): number | undefined {
  // fake-timers keeps pending timers in `clock.timers` (id → { callAt });
  // it has no public "peek" that does not also fire the timer.
  const timers = (clock as unknown as { timers?: Map<number, { callAt: number }> }).timers;
  if (timers === undefined) return undefined;
  let min: number | undefined;
  for (const t of timers.values()) if (min === undefined || t.callAt < min) min = t.callAt;
  return min;
}

/**
 * Runs `fn` (which may use the real timer APIs) on virtual time, from inside
 * a kernel task. Resolves with its result once it settles.
 *
 * @example
 * k.spawn('client', () => runOnVirtualTime(k, () => realRetryingClient()));
 */
export async function runOnVirtualTime<T>(kernel: Kernel, fn: () => Promise<T>, opts: BridgeOptions = {}): Promise<T> {
  if (active) throw new Error('runOnVirtualTime: another bridged computation is already active (the fake clock is process-global)');
  active = true;
  const clock = FakeTimers.withGlobal(globalThis).install({
    now: kernel.now,
    // An explicit list: nextTick, queueMicrotask and setImmediate stay real.
    toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'],
  });
  try {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    fn().then(
      (value) => (outcome = { ok: true, value }),
      (error) => (outcome = { ok: false, error }),
    );
    const roundsMax = opts.roundsMax ?? 100_000;
    for (let round = 0; ; round++) {
      await settle();
      if (outcome !== undefined) break;
      if (round >= roundsMax) throw new Error(`runOnVirtualTime: limit roundsMax=${roundsMax} reached (a timer that keeps re-arming?) at t=${kernel.now} ms, seed ${kernel.seed}`);
      const next = earliestTimer(clock);
      if (next === undefined) {
        throw new Error('runOnVirtualTime: the code is waiting, but not on a timer (real I/O or a promise nobody resolves); it cannot run on virtual time');
      }
      const delay = Math.max(0, next - clock.now);
      await kernel.sleep(delay);
      clock.tick(delay);
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  } finally {
    clock.uninstall();
    active = false;
  }
}
