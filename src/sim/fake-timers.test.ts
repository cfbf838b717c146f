import { describe, expect, it } from 'vitest';
import { Kernel } from './kernel.js';
import { awaitPendingTimers, runOnVirtualTime } from './fake-timers.js';

/** Ordinary timer-based code that knows nothing about the kernel. */
async function wallClockRetry(): Promise<{ at: number[]; perf: number }> {
  const t0 = Date.now();
  const p0 = performance.now();
  const at: number[] = [];
  let delay = 500;
  for (let attempt = 0; attempt < 6; attempt++) {
    await new Promise((r) => setTimeout(r, delay));
    at.push(Date.now() - t0);
    delay *= 2;
  }
  let ticks = 0;
  await new Promise<void>((resolve) => {
    const h = setInterval(() => { if (++ticks === 3) { clearInterval(h); resolve(); } }, 100);
  });
  return { at, perf: performance.now() - p0 };
}

describe('fake-timers bridge', () => {
  it('runs seconds of setTimeout/setInterval code on virtual time, identically every run', async () => {
    const results: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      const k = new Kernel({ seed: 1 });
      const t = k.spawn('client', () => runOnVirtualTime(k, wallClockRetry));
      await k.run();
      // 31.8 s of virtual time; how little wall time it costs is measured in
      // `npm run bench`, not asserted here.
      expect(k.now).toBe(31_800);
      results.push(t.done.value);
    }
    expect(results[0]).toEqual({ at: [500, 1500, 3500, 7500, 15500, 31500], perf: 31_800 });
    expect(results[1]).toEqual(results[0]);
    expect(results[2]).toEqual(results[0]);
  });

  it('interleaves bridged code with other kernel tasks in virtual-time order', async () => {
    const k = new Kernel({ seed: 1 });
    const log: string[] = [];
    k.spawn('bridged', () => runOnVirtualTime(k, async () => {
      await new Promise((r) => setTimeout(r, 100));
      log.push(`bridged@${k.now}`);
    }));
    k.spawn('native', async () => { await k.sleep(50); log.push(`native@${k.now}`); await k.sleep(100); log.push(`native@${k.now}`); });
    await k.run();
    expect(log).toEqual(['native@50', 'bridged@100', 'native@150']);
  });

  it('restores the real timers afterwards', async () => {
    const real = setTimeout;
    const k = new Kernel({ seed: 1 });
    k.spawn('x', () => runOnVirtualTime(k, async () => { await new Promise((r) => setTimeout(r, 10)); }));
    await k.run();
    expect(setTimeout).toBe(real);
  });

  it('awaitPendingTimers waits on virtual time for the one-shot timers pending now, not for what they arm nor for an interval (as a simulated run\'s end does)', async () => {
    const k = new Kernel({ seed: 1 });
    const log: string[] = [];
    const t = k.spawn('x', () => runOnVirtualTime(k, async () => {
      setTimeout(() => log.push(`a@${Date.now()}`), 50);
      setTimeout(() => {
        log.push(`b@${Date.now()}`);
        setTimeout(() => log.push('armed by b'), 100); // armed after the wait began: not waited for
      }, 20);
      const h = setInterval(() => log.push(`tick@${Date.now()}`), 30); // never ends: not waited for (it ticks while time passes)
      await awaitPendingTimers();
      clearInterval(h);
      return Date.now();
    }));
    await k.run();
    expect(t.done.value).toBe(50);
    expect(log).toEqual(['b@20', 'tick@30', 'a@50']);
  });

  it('awaitPendingTimers outside a bridged computation says so', async () => {
    await expect(awaitPendingTimers()).rejects.toThrow(/no bridged computation is active/);
  });

  it('reports code that waits on something other than a timer', async () => {
    const k = new Kernel({ seed: 1 });
    k.spawn('x', () => runOnVirtualTime(k, () => new Promise<void>(() => {})));
    await expect(k.run()).rejects.toThrow(/not on a timer/);
  });
});
