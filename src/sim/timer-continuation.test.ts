import { describe, expect, it } from 'vitest';
import { Kernel } from './kernel.js';
import { installKernelClock, type ClockScope } from './fake-timers.js';
// What every command loads first: a `Date.now` or `performance.now` a module captured follows the simulated clock.
import './load-clock.js';

const EPOCH = 1767225600000; // 2026-01-01, a user's service's epoch

/**
 * A timer whose callback resolves a promise (`new Promise((r) =>
 * setTimeout(r, 1))`, a library's yield loop: Bottleneck, p-queue) fires as a
 * kernel event while its owner is busy elsewhere (in a step or a sleep of
 * the kernel). What awaits that promise runs in the microtasks after the
 * callback: in Node, before the next timer; here, in the owner's scope.
 */
describe('the continuation of a promise a timer callback resolved', () => {
  async function run(): Promise<Array<[number, number, string]>> {
    const k = new Kernel({ seed: 7 });
    const clock = installKernelClock(k, EPOCH);
    const seen: Array<[number, number, string]> = [];
    try {
      const scope: ClockScope = { name: 'req', offsetMs: 0, rng: k.fork('req'), park: (ms) => k.sleep(ms) };
      k.spawn('req', async () => {
        clock.enter(scope);
        void new Promise((r) => setTimeout(r, 1)).then(() => { // real-time: allowed (simulated code: the kernel's clock)
          // Two awaits deep, as a library's chain is.
          return Promise.resolve().then(() => seen.push([Date.now(), Math.random(), typeof setTimeout(() => undefined, 5)])); // real-time: allowed (simulated code: the kernel's clock)
        });
        clock.leave();
        await k.sleep(10); // busy in the kernel when its timer comes due: the timer fires as an event
      });
      await clock.watch(k.run(), () => new Error('stuck'));
    } finally {
      clock.release();
    }
    return seen;
  }

  it('reads the kernel\'s clock and the owner\'s stream, and arms virtual timers — it read the machine\'s (a real 2026-12 date, a real setTimeout), the same on every run', async () => {
    const a = await run();
    expect(a).toHaveLength(1);
    const [at, rnd, timer] = a[0]!;
    expect(at).toBe(EPOCH + 1);
    // A virtual timer is the kernel's handle object, not Node's Timeout.
    expect(timer).toBe('object');
    expect(await run()).toEqual([[at, rnd, timer]]);
  });

  it('Date.now() read outside every scope while a run is installed is the machine\'s clock — it recursed until the stack overflowed', () => {
    const k = new Kernel({ seed: 1 });
    const clock = installKernelClock(k, EPOCH);
    try {
      const real = new Date().getTime(); // real-time: allowed (the test's own clock: the machine's)
      expect(Math.abs(Date.now() - real)).toBeLessThan(60_000); // real-time: allowed (host code outside every scope)
    } finally {
      clock.release();
    }
  });
});
